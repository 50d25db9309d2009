import Foundation
import MarqueeCore

/// The members of an `update` or `end` push's `aps` a device reads, parsed once: a broadcast applies
/// the same push to every subscribed activity (66,667 for each started event in the soak), which
/// parsed each member again for every one of them.
struct ActivityUpdateFields: Sendable {
    /// Why no activity takes the push whatever its state (no `aps`, not an update or end); `nil`
    /// for an update or end.
    var refusal: String?
    var isEnd = false
    var timestamp: Int64?
    var contentState: JSONValue?
    var staleDate: Date?
    var relevanceScore: Double?
    var alert: JSONValue?
    var dismissalDate: Date?

    init(_ payload: PushPayload?) {
        guard let aps = payload?.aps else {
            refusal = "no aps dictionary"
            return
        }
        switch aps["event"] {
        case .string("update")?: isEnd = false
        case .string("end")?: isEnd = true
        case .string("start")?:
            refusal = "a running activity cannot be started again"
            return
        default:
            refusal = "event must be update or end"
            return
        }
        timestamp = EnvironmentWorld.seconds(aps["timestamp"])
        contentState = aps["content-state"]
        staleDate = EnvironmentWorld.date(aps["stale-date"])
        relevanceScore = EnvironmentWorld.double(aps["relevance-score"])
        alert = aps["alert"]
        dismissalDate = isEnd ? EnvironmentWorld.date(aps["dismissal-date"]) : nil
    }
}
