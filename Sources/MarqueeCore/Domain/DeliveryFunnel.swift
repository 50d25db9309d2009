import Foundation

/// A stage of an event's delivery funnel in one environment: each counts devices (push-to-start
/// token rows, which follow a rotated token). A new stage is a new case here, its branch in each
/// store's funnel query and its field in the API: nothing else changes shape.
public enum FunnelStage: String, Sendable, Hashable, CaseIterable {
    /// The audiences of the event's start jobs when each was created (resends of uncertain starts
    /// and starts sent for a reason such as `absent` re-target devices already counted: not counted
    /// again).
    case targeted
    /// Devices a start of the event was sent to and that ended with an outcome: accepted, rejected,
    /// uncertain or failed after its retries.
    case sent
    /// Devices APNs accepted a start for (the start ledger).
    case accepted
    /// Devices whose start APNs refused for good (by reason in `DeliveryFunnel.rejectedByReason`),
    /// and not accepted since.
    case rejected
    /// Devices whose start got no answer, and not accepted since.
    case uncertain
    /// Devices whose start failed after its last retry (APNs kept answering "later" or could not be
    /// reached), and not accepted since.
    case failed
    /// Devices whose app last reported the activity showing.
    case showing
    /// Devices whose app last reported no activity there.
    case absent
    /// Devices whose app last reported the activity ended or dismissed.
    case ended
    /// Devices started by a late-join start (a start job whose arguments say `lateJoin: true`):
    /// registered or refreshed while the event was live.
    case lateJoinersStarted
    /// Devices started by a start sent because the device reported `absent` (a start job whose
    /// arguments carry `"reason": "absent"`). No job carries that reason until the `confirm`
    /// policy's flow creates them: until then this stage reads 0.
    case absentThenStarted
}

/// An event's delivery funnel in one environment, computed by the store in one query.
public struct DeliveryFunnel: Sendable, Hashable {
    public var environment: APNSEnvironment
    /// Devices per stage; a stage absent from the map has none.
    public var counts: [FunnelStage: Int64]
    /// The `rejected` devices by APNs' reason, as APNs wrote it (`none` when it gave none).
    public var rejectedByReason: [String: Int64]

    public init(
        environment: APNSEnvironment,
        counts: [FunnelStage: Int64] = [:],
        rejectedByReason: [String: Int64] = [:]
    ) {
        self.environment = environment
        self.counts = counts
        self.rejectedByReason = rejectedByReason
    }

    public subscript(stage: FunnelStage) -> Int64 {
        get { counts[stage] ?? 0 }
        set { counts[stage] = newValue }
    }
}
