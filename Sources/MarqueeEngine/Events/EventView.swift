import Foundation
import MarqueeCore

/// An event with its live channels, as the API shows it.
public struct EventView: Sendable, Hashable {
    public var event: Event
    /// Live channels (creating, active, deleting), one per environment at most.
    public var channels: [BroadcastChannel]
    /// The durations the event's timeline runs by (its overrides, else the server's defaults);
    /// `nil` for an event without a timeline.
    public var timelineDurations: EventTimeline.Durations?

    public init(event: Event, channels: [BroadcastChannel], timelineDurations: EventTimeline.Durations? = nil) {
        self.event = event
        self.channels = channels
        self.timelineDurations = timelineDurations
    }
}

/// An open event's channel in one environment, for the apps that subscribe to it.
public struct LiveEvent: Sendable, Hashable {
    public var event: Event
    public var channel: BroadcastChannel
}

/// An event's active channel in one environment as apps read it, with how long it will exist: an
/// app that subscribes ahead of the start (an activity scheduled to begin at kick-off) needs the
/// channel to outlive its activity.
public struct EventChannelView: Sendable, Hashable {
    public var event: Event
    public var channel: BroadcastChannel
    /// When the event's timeline will close the event and delete its channels (the `close` step's
    /// due time); `nil` when no timeline will: the channel then lives until the producer closes the
    /// event.
    public var expiresAt: Date?
}
