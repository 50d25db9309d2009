import Foundation
import MarqueeAPNS
import MarqueeCore
import Testing

@testable import MarqueeEngine

/// The fan-out's decisions, without any I/O: which start each device gets, what each APNs answer
/// means, what a batch commits and up to which checkpoint.
@Suite("Start fan-out state machine")
struct FanOutStateMachineTests {
    let now = Date(timeIntervalSince1970: 1_767_225_600)

    func machine(
        batchSize: Int = 100,
        attempts: Int = 3,
        hasChannel: Bool = true,
        everyoneToken: Bool = false,
        uncertainStarts: UncertainStartPolicy? = .skip,
        checkpoint: Int64? = nil
    ) -> FanOutStateMachine {
        // No uncertain-start policy: a job whose pushes a device drops as repeats (activity updates).
        let policy: any FanOutPolicy =
            uncertainStarts.map {
                StartOutcomePolicy(hasChannel: hasChannel, everyoneGetsUpdateToken: everyoneToken, uncertainStarts: $0)
            } ?? PlainFanOutPolicy()
        return FanOutStateMachine(
            configuration: .init(
                batchSize: batchSize,
                maximumAttempts: attempts,
                retryBacklogLimit: 10,
                retryBaseDelay: .seconds(1)
            ),
            jobID: JobID(),
            policy: policy,
            checkpoint: checkpoint
        )
    }

    func tokens(_ rows: ClosedRange<Int64>, version: String? = "18.0") -> [AudienceRecipient] {
        rows.map { AudienceRecipient(rowID: $0, token: String(format: "%064llx", $0), iosVersion: version) }
    }

    func rejection(_ status: Int, _ reason: APNSErrorReason, timestamp: Int64? = nil) -> FanOutStateMachine.SendResult {
        .failed(.rejected(APNSRejection(status: status, reason: reason, timestampMilliseconds: timestamp)))
    }

    @Test("accepted starts are committed with the ledger's token rows and advance the checkpoint")
    func acceptedBatch() {
        var machine = machine(batchSize: 3)
        machine.beginRound()
        let sends = machine.pageRead(tokens(1...4, version: "17.4"))
        #expect(sends.map(\.attempt) == [1, 1, 1, 1])
        // Out of order: 2 and 3 first; 1 is still in flight, so the checkpoint cannot pass it.
        machine.outcome(index: 1, .accepted(apnsID: nil), now: now)
        machine.outcome(index: 2, .accepted(apnsID: nil), now: now)
        #expect(!machine.commitIsDue(now: now))
        machine.outcome(index: 3, .accepted(apnsID: nil), now: now)
        #expect(machine.commitIsDue(now: now))
        let first = machine.takeBatch()
        #expect(first.deliveries.map(\.tokenRowID) == [2, 3, 4])
        #expect(first.startedWithUpdateToken == [2, 3, 4])
        #expect(first.checkpoint == nil)
        #expect(first.progress.succeeded == 3)
        machine.outcome(index: 0, .accepted(apnsID: nil), now: now)
        let second = machine.takeBatch()
        #expect(second.checkpoint == 4)
        #expect(machine.nextStep(now: now) == .complete)
    }

    @Test("a 410 retires the token only with APNs' timestamp; other dead-token answers just fail it")
    func deadTokens() {
        var machine = machine()
        machine.beginRound()
        _ = machine.pageRead(tokens(1...3))
        machine.outcome(index: 0, rejection(410, .unregistered, timestamp: 1_767_225_000_000), now: now)
        machine.outcome(index: 1, rejection(400, .badDeviceToken), now: now)
        machine.outcome(index: 2, rejection(410, .unregistered), now: now)
        let batch = machine.takeBatch()
        #expect(batch.deliveries.map(\.outcome) == [.tokenInvalid, .tokenInvalid, .tokenInvalid])
        #expect(batch.invalidations.keys.sorted() == [1])
        #expect(batch.invalidations[1]?.apnsTimestampMilliseconds == 1_767_225_000_000)
        #expect(batch.progress.failed == 3)
        #expect(batch.startedWithUpdateToken.isEmpty)
    }

    @Test("what APNs asks to retry is sent again with back-off, holding the checkpoint, until the last attempt")
    func retries() {
        var machine = machine(attempts: 2)
        machine.beginRound()
        _ = machine.pageRead(tokens(1...2))
        machine.outcome(index: 0, rejection(429, .tooManyRequests), now: now)
        machine.outcome(index: 1, .accepted(apnsID: nil), now: now)
        let batch = machine.takeBatch()
        #expect(batch.deliveries.map(\.tokenRowID) == [2])
        #expect(batch.checkpoint == nil)
        #expect(machine.nextStep(now: now) == .retry(at: now.addingTimeInterval(1)))

        machine.beginRound()
        #expect(machine.retriesDue(now: now).isEmpty)
        let due = machine.retriesDue(now: now.addingTimeInterval(1))
        #expect(due.map(\.tokenRowID) == [1])
        #expect(due.map(\.attempt) == [2])
        machine.outcome(index: 0, .failed(.connectionFailed("reset")), now: now)
        let last = machine.takeBatch()
        #expect(last.deliveries.map(\.outcome) == [.failed])
        #expect(last.deliveries.map(\.attempt) == [2])
        #expect(last.checkpoint == 2)
        #expect(machine.nextStep(now: now) == .complete)
    }

    @Test("sends a round ended without answering are retried; a full retry backlog hands the job back")
    func backlog() {
        var machine = machine(attempts: 5, uncertainStarts: nil)
        machine.beginRound()
        _ = machine.pageRead(tokens(1...11))
        machine.roundEnded(now: now)
        #expect(machine.retryBacklogIsFull)
        #expect(machine.nextStep(now: now) == .rescheduleJob(at: now.addingTimeInterval(1)))
        #expect(machine.takeBatch().checkpoint == nil)
    }

    @Test("a rejected start is final and never retried")
    func rejected() {
        var machine = machine()
        machine.beginRound()
        _ = machine.pageRead(tokens(5...5))
        machine.outcome(index: 0, rejection(400, .badPriority), now: now)
        let batch = machine.takeBatch()
        #expect(batch.deliveries.map(\.outcome) == [.rejected])
        #expect(batch.deliveries.first?.reason == .badPriority)
        #expect(batch.checkpoint == 5)
        #expect(machine.nextStep(now: now) == .complete)
    }

    @Test("a resumed run starts from its checkpoint and never moves it back")
    func resumed() {
        var machine = machine(checkpoint: 40)
        machine.beginRound()
        _ = machine.pageRead(tokens(41...42))
        machine.outcome(index: 1, .accepted(apnsID: nil), now: now)
        #expect(machine.takeBatch().checkpoint == nil)
        machine.outcome(index: 0, .accepted(apnsID: nil), now: now)
        #expect(machine.takeBatch().checkpoint == 42)
    }

    // MARK: Uncertain starts: written to APNs, no answer

    @Test(
        """
        under skip, an unanswered start is final as uncertain: committed, counted as sent and uncertain, never \
        sent again
        """
    )
    func uncertainSkipped() {
        var machine = machine(uncertainStarts: .skip)
        machine.beginRound()
        _ = machine.pageRead(tokens(1...3))
        machine.outcome(index: 0, .accepted(apnsID: nil), now: now)
        machine.outcome(index: 1, .uncertain(why: "connection reset"), now: now)
        machine.outcome(index: 2, rejection(400, .badPriority), now: now)
        let batch = machine.takeBatch()
        #expect(batch.deliveries.map(\.outcome) == [.accepted, .uncertain, .rejected])
        #expect(batch.deliveries[1].status == nil)
        #expect(batch.deliveries[1].reason == nil)
        #expect(batch.progress == JobProgress(attempted: 3, succeeded: 1, failed: 1, uncertain: 1))
        // Final: the checkpoint passes it, and nothing waits for a retry.
        #expect(batch.checkpoint == 3)
        #expect(machine.nextStep(now: now) == .complete)
        #expect(machine.waitingForRetryCount == 0)
    }

    @Test("under skip, a start the client gave no outcome for is uncertain too: it may have been written")
    func roundEndedUncertain() {
        var machine = machine(uncertainStarts: .skip)
        machine.beginRound()
        _ = machine.pageRead(tokens(1...2))
        machine.outcome(index: 0, .accepted(apnsID: nil), now: now)
        machine.roundEnded(now: now)
        let batch = machine.takeBatch()
        #expect(batch.deliveries.map(\.outcome) == [.accepted, .uncertain])
        #expect(batch.progress.uncertain == 1)
        #expect(machine.nextStep(now: now) == .complete)
    }

    @Test(
        """
        under resend, an unanswered start is sent again in a later round, holding the checkpoint, without using \
        up an attempt; after its last unanswered resend it is final as uncertain
        """
    )
    func uncertainResent() {
        var machine = machine(attempts: 2, uncertainStarts: .resend)
        machine.beginRound()
        _ = machine.pageRead(tokens(1...2))
        machine.outcome(index: 0, .uncertain(why: "connection reset"), now: now)
        machine.outcome(index: 1, .accepted(apnsID: nil), now: now)
        let first = machine.takeBatch()
        #expect(first.deliveries.map(\.tokenRowID) == [2])
        #expect(first.progress.uncertain == 0)
        #expect(first.checkpoint == nil)
        #expect(machine.nextStep(now: now) == .retry(at: now.addingTimeInterval(1)))

        var later = now.addingTimeInterval(1)
        #expect(machine.retryRowsDue(now: later) == [1])
        // Every resend unanswered too: past the token's 2 attempts (an unanswered send uses none),
        // up to the bound of unanswered resends.
        for resend in 1...StartOutcomePolicy.maximumUnansweredResends {
            machine.beginRound()
            let due = machine.retriesDue(now: later)
            #expect(due.map(\.tokenRowID) == [1])
            #expect(due.map(\.attempt) == [resend + 1])
            machine.outcome(index: 0, .uncertain(why: "timeout"), now: later)
            later = later.addingTimeInterval(3_600)
            if resend < StartOutcomePolicy.maximumUnansweredResends {
                #expect(machine.takeBatch().deliveries.isEmpty)
            }
        }
        let last = machine.takeBatch()
        #expect(last.deliveries.map(\.outcome) == [.uncertain])
        #expect(last.deliveries.map(\.attempt) == [StartOutcomePolicy.maximumUnansweredResends + 1])
        #expect(last.progress == JobProgress(attempted: 1, uncertain: 1))
        #expect(last.checkpoint == 2)
        #expect(machine.nextStep(now: later) == .complete)
    }

    @Test(
        """
        under resend, a start cut off as often as APNs asked for a retry still gets its answered attempts: \
        unanswered sends are not among them
        """
    )
    func uncertainDoesNotUseUpAttempts() {
        var machine = machine(attempts: 2, uncertainStarts: .resend)
        machine.beginRound()
        _ = machine.pageRead(tokens(1...1))
        machine.outcome(index: 0, rejection(503, .serviceUnavailable), now: now)
        var at = now.addingTimeInterval(1)
        machine.beginRound()
        _ = machine.retriesDue(now: at)
        machine.outcome(index: 0, .uncertain(why: "connection reset"), now: at)
        at = at.addingTimeInterval(2)
        machine.beginRound()
        #expect(machine.retriesDue(now: at).map(\.attempt) == [3])
        machine.outcome(index: 0, .accepted(apnsID: nil), now: at)
        let batch = machine.takeBatch()
        #expect(batch.deliveries.map(\.outcome) == [.accepted])
        #expect(batch.progress == JobProgress(attempted: 1, succeeded: 1, uncertain: 1))
    }

    @Test(
        """
        retries the run stopped before handing out were never sent: they wait for their retry again, not \
        uncertain, and hold the checkpoint
        """
    )
    func retriesNotSent() {
        var machine = machine(uncertainStarts: .skip)
        machine.beginRound()
        _ = machine.pageRead(tokens(1...2))
        machine.outcome(index: 0, rejection(429, .tooManyRequests), now: now)
        machine.outcome(index: 1, rejection(429, .tooManyRequests), now: now)
        _ = machine.takeBatch()

        let later = now.addingTimeInterval(1)
        machine.beginRound()
        #expect(machine.retriesDue(now: later).map(\.attempt) == [2, 2])
        machine.retriesNotSent(2, now: later)
        machine.roundEnded(now: later)
        let batch = machine.takeBatch()
        #expect(batch.deliveries.isEmpty)
        #expect(batch.progress.uncertain == 0)
        #expect(batch.checkpoint == nil)
        #expect(machine.waitingForRetryCount == 2)
        machine.beginRound()
        #expect(machine.retriesDue(now: later).map(\.attempt) == [2, 2])
    }

    @Test(
        """
        under resend, a start answered on its second send is accepted once, with that attempt, and counts as \
        uncertain too: its first may have arrived
        """
    )
    func uncertainThenAccepted() {
        var machine = machine(uncertainStarts: .resend)
        machine.beginRound()
        _ = machine.pageRead(tokens(7...7, version: "17.4"))
        machine.outcome(index: 0, .uncertain(why: "GOAWAY"), now: now)
        #expect(machine.takeBatch().deliveries.isEmpty)
        machine.beginRound()
        _ = machine.retriesDue(now: now.addingTimeInterval(1))
        machine.outcome(index: 0, .accepted(apnsID: nil), now: now)
        let batch = machine.takeBatch()
        #expect(batch.deliveries.map(\.outcome) == [.accepted])
        #expect(batch.deliveries.map(\.attempt) == [2])
        #expect(batch.startedWithUpdateToken == [7])
        #expect(batch.progress == JobProgress(attempted: 1, succeeded: 1, uncertain: 1))
    }

    @Test(
        """
        under resend, the tokens a crashed run may have sent (through its reservation) go again and count as \
        uncertain whatever their answer
        """
    )
    func crashWindowResent() {
        var machine = machine(uncertainStarts: .resend, checkpoint: 0)
        machine.beginRound()
        let sends = machine.pageRead(tokens(1...3), mayHaveArrivedThrough: 2)
        #expect(sends.map(\.mayHaveArrived) == [true, true, false])
        machine.outcome(index: 0, .accepted(apnsID: nil), now: now)
        machine.outcome(index: 1, rejection(400, .badDeviceToken), now: now)
        machine.outcome(index: 2, .accepted(apnsID: nil), now: now)
        let batch = machine.takeBatch()
        #expect(batch.progress == JobProgress(attempted: 3, succeeded: 2, failed: 1, uncertain: 2))
        #expect(batch.checkpoint == 3)
    }

    @Test(
        """
        a retry goes through the start ledger: a token started meanwhile is not sent again, and counts as sent, \
        not failed
        """
    )
    func retryThroughLedger() {
        var machine = machine(uncertainStarts: .resend)
        machine.beginRound()
        _ = machine.pageRead(tokens(1...3))
        machine.outcome(index: 0, .uncertain(why: "connection reset"), now: now)
        machine.outcome(index: 1, rejection(429, .tooManyRequests), now: now)
        machine.outcome(index: 2, .uncertain(why: "connection reset"), now: now)
        _ = machine.takeBatch()

        let later = now.addingTimeInterval(1)
        #expect(machine.retryRowsDue(now: later) == [1, 2, 3])
        machine.beginRound()
        // Another job of the event started 1 and 2 meanwhile (the start ledger holds them).
        let due = machine.retriesDue(now: later, alreadyStarted: [1, 2])
        #expect(due.map(\.tokenRowID) == [3])
        machine.outcome(index: 0, .accepted(apnsID: nil), now: later)
        let batch = machine.takeBatch()
        #expect(
            Dictionary(uniqueKeysWithValues: batch.deliveries.map { ($0.tokenRowID, $0.outcome) }) == [
                1: .skipped, 2: .skipped, 3: .accepted,
            ]
        )
        // 1 and 3 had an unanswered start before: each device may show two, so both count as uncertain.
        #expect(batch.progress == JobProgress(attempted: 3, succeeded: 1, uncertain: 2))
        #expect(batch.checkpoint == 3)
        #expect(machine.nextStep(now: later) == .complete)
    }

    @Test("pushes a device drops as repeats (a job without a start policy) are sent again when uncertain")
    func uncertainUpdateRetried() {
        var machine = machine(attempts: 2, uncertainStarts: nil)
        machine.beginRound()
        _ = machine.pageRead(tokens(1...1))
        machine.outcome(index: 0, .uncertain(why: "connection reset"), now: now)
        #expect(machine.takeBatch().deliveries.isEmpty)
        #expect(machine.nextStep(now: now) == .retry(at: now.addingTimeInterval(1)))
        machine.beginRound()
        _ = machine.retriesDue(now: now.addingTimeInterval(1))
        machine.outcome(index: 0, .uncertain(why: "connection reset"), now: now)
        // Its last attempt fails it like any "later": it never counts as uncertain.
        let batch = machine.takeBatch()
        #expect(batch.deliveries.map(\.outcome) == [.failed])
        #expect(batch.progress == JobProgress(attempted: 1, failed: 1))
    }
}
