import Foundation
import MarqueeCore
import Testing

@testable import MarqueeEngine

/// When a fan-out commits its outcomes: every `batchSize` of them, and whenever the oldest has
/// waited `commitInterval`, so that what a crash can leave uncertain is bounded in time as well.
@Suite("Fan-out commit interval")
struct FanOutCommitIntervalTests {
    let now = Date(timeIntervalSince1970: 1_767_225_600)

    func machine(batchSize: Int = 100) -> FanOutStateMachine { .forTesting(batchSize: batchSize) }
    func tokens(_ rows: ClosedRange<Int64>) -> [AudienceRecipient] { FanOutStateMachine.recipients(rows) }

    @Test("nothing is due while no final outcome waits, however long it has been")
    func nothingWaiting() {
        var machine = machine()
        machine.beginRound()
        _ = machine.pageRead(tokens(1...3))
        #expect(!machine.commitIsDue(now: now.addingTimeInterval(3600)))
    }

    @Test("one outcome is due 250 ms after it became final, counted from the oldest waiting")
    func dueByTime() {
        var machine = machine()
        machine.beginRound()
        _ = machine.pageRead(tokens(1...3))
        machine.outcome(index: 0, .accepted(apnsID: nil), now: now)
        machine.outcome(index: 1, .accepted(apnsID: nil), now: now.addingTimeInterval(0.2))
        #expect(!machine.commitIsDue(now: now.addingTimeInterval(0.249)))
        #expect(machine.commitIsDue(now: now.addingTimeInterval(0.25)))
        let batch = machine.takeBatch()
        #expect(batch.deliveries.map(\.tokenRowID) == [1, 2])
        // The interval starts again with the next outcome, not at the last commit.
        #expect(!machine.commitIsDue(now: now.addingTimeInterval(10)))
        machine.outcome(index: 2, .accepted(apnsID: nil), now: now.addingTimeInterval(10))
        #expect(!machine.commitIsDue(now: now.addingTimeInterval(10.1)))
        #expect(machine.commitIsDue(now: now.addingTimeInterval(10.25)))
    }

    @Test("a batch's worth is due at once")
    func dueByCount() {
        var machine = machine(batchSize: 2)
        machine.beginRound()
        _ = machine.pageRead(tokens(1...3))
        machine.outcome(index: 0, .accepted(apnsID: nil), now: now)
        #expect(!machine.commitIsDue(now: now))
        machine.outcome(index: 1, .accepted(apnsID: nil), now: now)
        #expect(machine.commitIsDue(now: now))
    }
}
