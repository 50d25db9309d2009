import Foundation
import MarqueeAPNS
import MarqueeCore

/// What differs between fan-outs (a start job's partition, an activity-update job): where the
/// pages come from, what each send's push is, and how a batch of outcomes is committed.
/// `FanOutRunner` does the rest: streaming, retries, leases, checkpoints.
protocol FanOutWork: Sendable {
    /// The next page after `cursor` (rows in increasing order), registered with `machine`; `nil`
    /// when nothing is left.
    func page(after cursor: Int64, limit: Int, machine: MachineBox) async throws -> FanOutPage?
    /// The push for one send (the job's payload, addressed to the send's token).
    func push(for send: FanOutStateMachine.Send) throws -> APNSDevicePush
    /// Writes the batch's outcomes, progress and checkpoint in one transaction, if `owner` still
    /// holds the job's lease (`StoreError.leaseLost` otherwise). `commitID` is the same for every
    /// try of one batch: a try after one that was applied (its answer lost) changes nothing.
    func commit(_ batch: FanOutStateMachine.Batch, commitID: UUID, owner: String) async throws
    /// Whether the run records the tokens it hands out (`Job.reservedThrough`) before it sends them:
    /// for pushes a second copy of which would show twice (starts), not for those the device drops
    /// as repeats by their timestamp.
    var reservesTokens: Bool { get }
    /// Which of these token rows must not be sent again: a start job's answer is those the start
    /// ledger holds for its event (started by another job meanwhile).
    func alreadyStarted(among tokenRowIDs: [Int64]) async throws -> Set<Int64>
}

extension FanOutWork {
    /// Work whose pushes a device drops when it has them already sends every retry.
    func alreadyStarted(among tokenRowIDs: [Int64]) async throws -> Set<Int64> { [] }
}

/// One page of a fan-out's audience, as sends.
struct FanOutPage: Sendable {
    var sends: [FanOutStateMachine.Send]
    /// The cursor to continue from.
    var lastRow: Int64
    /// Whether this was the last page (fewer rows than asked for), so no further read is needed.
    var isLast: Bool
}
