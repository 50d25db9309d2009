/// Why MarqueeKit could not do what it was asked.
public enum MarqueeKitError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Marquee answered, and refused.
    case rejected(MarqueeRejection)
    /// No answer came: no connection, a timeout. Its description, as the transport gave it.
    case unreachable(String)
    /// An argument Marquee would refuse anyway (an event key outside its pattern); not sent.
    case invalidArgument(String)

    public var description: String {
        switch self {
        case .rejected(let rejection): rejection.description
        case .unreachable(let reason): "Marquee could not be reached: \(reason)"
        case .invalidArgument(let reason): reason
        }
    }
}
