/// Why a push is not one MarqueeKit can answer.
public enum MarqueeBackgroundPushError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No `marquee` object: not Marquee's push. The app handles it as it would without MarqueeKit.
    case notMarquee
    /// Marquee's push, but not as this MarqueeKit reads it: what is wrong with it.
    case malformed(String)
    /// A `marquee.ask` this MarqueeKit does not know (a newer server): the app should update.
    case unsupportedAsk(String)

    public var description: String {
        switch self {
        case .notMarquee: "the push has no `marquee` object: it is not Marquee's"
        case .malformed(let reason): "Marquee's push is malformed: \(reason)"
        case .unsupportedAsk(let ask): "Marquee's push asks for `\(ask)`, which this MarqueeKit does not know"
        }
    }
}
