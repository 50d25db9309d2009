#if canImport(ActivityKit)
import ActivityKit

/// An app's ActivityKit attributes for Marquee's events: each activity says which event it
/// follows, so that MarqueeKit reports per event and finds a second activity of one.
///
/// ```swift
/// struct MatchAttributes: MarqueeActivityAttributes {
///     var eventKey: String
///     var homeTeam: String
///     var awayTeam: String
///     var marqueeEventKey: String { eventKey }
///     struct ContentState: Codable, Hashable { var home: Int; var away: Int }
/// }
/// ```
public protocol MarqueeActivityAttributes: ActivityAttributes {
    /// The producer's event key, as the start's `attributes` carry it.
    var marqueeEventKey: String { get }
}
#endif
