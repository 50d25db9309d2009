import Foundation
import NIOCore

/// What a push does, as the client's metrics count it (`kind` of `marquee_apns_pushes_total`): a
/// device push starts, updates or ends a Live Activity; a broadcast publishes to a channel; a
/// background push wakes an app (to ask it what its Lock Screen shows).
public enum APNSPushKind: Int, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case start
    case update
    case end
    case broadcast
    case background

    /// The metric label value.
    public var description: String {
        switch self {
        case .start: "start"
        case .update: "update"
        case .end: "end"
        case .broadcast: "broadcast"
        case .background: "background"
        }
    }

    /// The kind a Live Activity body declares in `aps.event`; `update` when it names none (APNs
    /// refuses such a body, and an update is what a body without a start or end is taken for).
    /// One JSON parse: fan-outs build one push and copy it with `sending(to:)`.
    static func declared(by payload: ByteBuffer) -> APNSPushKind {
        guard let object = try? JSONSerialization.jsonObject(with: Data(payload.readableBytesView)) as? [String: Any],
            let aps = object["aps"] as? [String: Any], let event = aps["event"] as? String
        else { return .update }
        switch event {
        case "start": return .start
        case "end": return .end
        default: return .update
        }
    }
}
