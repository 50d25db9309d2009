import Foundation
import MarqueeCore
import Testing

@testable import MarqueeEngine

/// What a fan-out part does with the crash window, as pure logic: tokens an earlier run reserved and
/// never settled are uncertain without a send, and sends read but never handed out leave the round.
@Suite("Fan-out crash window")
struct FanOutCrashWindowTests {
    let now = Date(timeIntervalSince1970: 1_767_225_600)

    func machine(checkpoint: Int64? = nil) -> FanOutStateMachine { .forTesting(checkpoint: checkpoint) }
    func tokens(_ rows: ClosedRange<Int64>) -> [AudienceRecipient] { FanOutStateMachine.recipients(rows) }

    @Test("tokens an earlier run may have sent are final as uncertain, unsent, and the checkpoint passes them")
    func uncertainFromEarlierRun() {
        var machine = machine(checkpoint: 10)
        machine.beginRound()
        machine.uncertainUnsent([11, 12], now: now)
        let sends = machine.pageRead(tokens(13...14))
        #expect(sends.map(\.tokenRowID) == [13, 14])
        machine.outcome(index: 0, .accepted(apnsID: nil), now: now)
        machine.outcome(index: 1, .accepted(apnsID: nil), now: now)
        machine.roundEnded(now: now)
        let batch = machine.takeBatch()
        #expect(batch.deliveries.filter { $0.outcome == .uncertain }.map(\.tokenRowID) == [11, 12])
        #expect(batch.progress.uncertain == 2)
        #expect(batch.progress.attempted == 4)
        #expect(batch.progress.succeeded == 2)
        #expect(batch.progress.failed == 0)
        #expect(batch.checkpoint == 14)
        #expect(machine.nextStep(now: now) == .complete)
    }

    @Test("sends read but never handed to the client leave the round: no outcome, and the checkpoint stops before them")
    func withdrawn() {
        var machine = machine(checkpoint: 0)
        machine.beginRound()
        _ = machine.pageRead(tokens(1...5))
        // The run stopped sending after handing out the first two.
        machine.withdrawUnsent(3, resumeAfter: 2)
        machine.outcome(index: 0, .accepted(apnsID: nil), now: now)
        machine.outcome(index: 1, .accepted(apnsID: nil), now: now)
        machine.roundEnded(now: now)
        let batch = machine.takeBatch()
        #expect(batch.deliveries.map(\.tokenRowID) == [1, 2])
        #expect(batch.checkpoint == 2)
        // Nothing of 3...5 waits for a retry or counts: a later run sends them.
        #expect(machine.nextStep(now: now) == .complete)
    }
}
