/// Why a Live Activity payload cannot be sent.
public enum LiveActivityPayloadError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The encoded JSON is larger than APNs accepts for this kind of push.
    case tooLarge(size: Int, limit: Int)

    public var description: String {
        switch self {
        case .tooLarge(let size, let limit):
            "Live Activity payload is \(size) bytes, over the APNs limit of \(limit) bytes"
        }
    }
}
