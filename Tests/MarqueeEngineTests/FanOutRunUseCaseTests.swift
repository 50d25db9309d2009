import Foundation
import MarqueeAPNS
import MarqueeCore
import MarqueeStorage
import MarqueeTesting
import Testing

@testable import MarqueeEngine

/// A start part's run when something gives way under it: its lease, the store, a cancellation.
/// Whatever happens, no device gets a start twice and every device ends with an outcome.
@Suite("Engine use case: fan-out run")
struct FanOutRunUseCaseTests {
    @Test("a run whose lease lapses stops; the worker that takes the part over sends the rest, nothing twice")
    func leaseLostMidRun() async throws {
        let harness = try await EngineHarness(jobs: EngineHarness.jobs(window: 1))
        let (jobID, tokens) = try await harness.enqueuedStart(devices: 8)
        let fake = harness.apns(.sandbox)
        fake.holdPushes()
        let part = try #require(try await harness.leaseStartPart(owner: "worker-a"))
        let handler = harness.startHandler()
        let first = Task { try await handler.run(part, owner: "worker-a", stop: RunStop()) }
        try await waitUntil("worker A's first push is written") { fake.heldPushes == 1 }

        harness.clock.advance(by: harness.runner.configuration.leaseDuration.timeInterval + 1)
        let takenOver = try #require(try await harness.leaseStartPart(owner: "worker-b"))
        #expect(takenOver.attempts == 2)
        fake.releasePushes()
        await #expect(throws: (any Error).self) { try await first.value }

        let ending = try await handler.run(takenOver, owner: "worker-b", stop: RunStop())
        #expect(ending == .completed)
        #expect(fake.pushCounts.values.allSatisfy { $0 == 1 }, "\(fake.pushCounts)")
        let outcomes = try await harness.outcomes(of: jobID, tokens: tokens)
        // Worker A had reserved the first four (a reservation covers 4 windows), handed out one:
        // they may have arrived, and are not sent again.
        #expect(tokens[..<4].allSatisfy { outcomes[$0] == .uncertain })
        #expect(fake.pushCounts[tokens[0]] == 1)
        #expect(
            tokens[4...].allSatisfy { outcomes[$0] == .accepted && fake.pushCounts[$0] == 1 },
            "outcomes \(tokens.map { outcomes[$0] }), pushes \(tokens.map { fake.pushCounts[$0] ?? 0 })"
        )
        await harness.close()
    }

    @Test("a commit the store fails for a moment is committed again: every outcome once, none sent again")
    func storeFailsForAMoment() async throws {
        // The retry's pause is a length no other sleep of the run has (the lease watch and the
        // flusher sleep 100 ms at most), so its sleep is known by its deadline: moving the clock
        // on before the retry sleeps would leave it waiting for ever.
        var jobs = EngineHarness.jobs(batchSize: 1)
        jobs.commitRetryFirstDelay = .milliseconds(1_500)
        let harness = try await EngineHarness(jobs: jobs)
        let (jobID, tokens) = try await harness.enqueuedStart(devices: 4)
        let failing = FailingCommitStore(harness.store, failingCommit: 2)
        let run = Task { try await harness.runStartParts(store: failing) }
        let retryDue = harness.clock.now.addingTimeInterval(jobs.commitRetryFirstDelay.timeInterval)
        try await waitUntil("the failed commit's retry waits") {
            failing.commitsFailed == 1 && harness.clock.sleepers.contains(retryDue)
        }
        harness.clock.advance(by: 2)
        let endings = try await run.value

        #expect(endings == [.completed])
        #expect(failing.commitsFailed == 1)
        #expect(harness.apns(.sandbox).pushCounts == Dictionary(uniqueKeysWithValues: tokens.map { ($0, 1) }))
        let outcomes = try await harness.outcomes(of: jobID, tokens: tokens)
        #expect(tokens.allSatisfy { outcomes[$0] == .accepted })
        let job = try await harness.job(jobID)
        #expect(job.state == .succeeded)
        #expect(job.progress.succeeded == 4)
        #expect(job.progress.attempted == 4)
        await harness.close()
    }

    @Test("a commit the store refuses stops the run; resumed, it sends what was never handed out and nothing twice")
    func storeRefusesACommit() async throws {
        let harness = try await EngineHarness(jobs: EngineHarness.jobs(window: 1, batchSize: 1))
        let (jobID, tokens) = try await harness.enqueuedStart(devices: 4)
        let failing = FailingCommitStore.refusing(commit: 2, of: harness.store)
        let part = try #require(try await harness.leaseStartPart(owner: "worker-a"))
        await #expect(throws: StoreError.self) {
            try await harness.startHandler(store: failing).run(part, owner: "worker-a", stop: RunStop())
        }

        #expect(try await harness.runStartPartsOnceTheLeaseLapses() == [.completed])

        let fake = harness.apns(.sandbox)
        #expect(fake.pushCounts.values.allSatisfy { $0 == 1 }, "\(fake.pushCounts)")
        let outcomes = try await harness.outcomes(of: jobID, tokens: tokens)
        #expect(outcomes.count == 4)
        #expect(outcomes[tokens[0]] == .accepted)
        // Sent, answered, its outcome never committed: it may have arrived, so it is not sent again.
        #expect(outcomes[tokens[1]] == .uncertain)
        for token in tokens {
            if outcomes[token] == .accepted { #expect(fake.pushCounts[token] == 1) }
        }
        #expect(try await harness.job(jobID).state == .succeeded)
        await harness.close()
    }

    @Test("a run that may no longer hand out sends before its watch says so hands its part back, never completes it")
    func stopsSendingBeforeTheWatchNotices() async throws {
        // The page source asks the lease before each slice; the watch looks every 100 ms of the
        // clock. Between the two (here: a renewal that failed, the watch asleep on a clock that
        // stands still) the round ends with the audience unread, and the run must not take that
        // for the end of its audience.
        let harness = try await EngineHarness(jobs: EngineHarness.jobs(window: 1))
        let (jobID, tokens) = try await harness.enqueuedStart(devices: 8)
        let fake = harness.apns(.sandbox)
        fake.holdPushes()
        let failing = FailingCommitStore(harness.store, failingCommit: .max)
        let (part, run) = try await harness.runningStartPart(store: failing)
        try await waitUntil("worker A's first push is written") { fake.heldPushes == 1 }

        failing.failRenewals()
        harness.clock.advance(by: harness.runner.configuration.leaseKeeping.renewInterval.timeInterval)
        try await waitUntil("the renewal the watch asked for failed") { failing.renewalsFailed == 1 }
        fake.releasePushes()
        #expect(try await run.value == .rescheduled)
        let handedBack = try await harness.job(part.id)
        #expect(handedBack.state == .pending)

        #expect(try await harness.runStartParts() == [.completed])
        #expect(fake.pushCounts == Dictionary(uniqueKeysWithValues: tokens.map { ($0, 1) }))
        let outcomes = try await harness.outcomes(of: jobID, tokens: tokens)
        #expect(tokens.allSatisfy { outcomes[$0] == .accepted }, "\(tokens.map { outcomes[$0] })")
        await harness.close()
    }

    @Test(
        "a reservation the store fails ends the run; what it read and never handed out is sent by the next, not left uncertain"
    )
    func reservationFails() async throws {
        // A window of 1: slices of one push, reserved four at a time. The second reservation (for
        // tokens 5 to 8) fails, as one does while PostgreSQL restarts.
        let harness = try await EngineHarness(jobs: EngineHarness.jobs(window: 1))
        let (jobID, tokens) = try await harness.enqueuedStart(devices: 8)
        let failing = FailingCommitStore(harness.store, failingCommit: .max, failingReservation: 2)
        let part = try #require(try await harness.leaseStartPart(owner: "worker-a"))
        await #expect(throws: FailingCommitStore.ConnectionDropped.self) {
            try await harness.startHandler(store: failing).run(part, owner: "worker-a", stop: RunStop())
        }

        #expect(try await harness.runStartPartsOnceTheLeaseLapses() == [.completed])
        let fake = harness.apns(.sandbox)
        #expect(fake.pushCounts == Dictionary(uniqueKeysWithValues: tokens.map { ($0, 1) }))
        let outcomes = try await harness.outcomes(of: jobID, tokens: tokens)
        #expect(tokens.allSatisfy { outcomes[$0] == .accepted }, "\(tokens.map { outcomes[$0] })")
        await harness.close()
    }

    @Test("a batch whose commit failed is never passed by a later one: every token ends with an outcome")
    func failedCommitIsNotPassed() async throws {
        // The flusher commits the first outcome (it waited the commit interval) and the store
        // refuses it; the outcome loop then has a batch of two due. Committed, that batch's
        // checkpoint would pass the first token, which has no outcome.
        let harness = try await EngineHarness(jobs: EngineHarness.jobs(window: 1, batchSize: 2))
        let (jobID, tokens) = try await harness.enqueuedStart(devices: 8)
        let fake = harness.apns(.sandbox)
        fake.holdPushes(after: 1)
        let failing = FailingCommitStore.refusing(commit: 1, of: harness.store)
        let (part, run) = try await harness.runningStartPart(store: failing)
        try await waitUntil("the flusher's commit of the first outcome failed") {
            harness.clock.advance(by: 0.05)
            return failing.commitsFailed == 1
        }
        fake.releasePushes()
        await #expect(throws: StoreError.self) { try await run.value }
        #expect(failing.commitsTried == 1, "no batch is committed after one failed")

        #expect(try await harness.runStartPartsOnceTheLeaseLapses() == [.completed])
        let outcomes = try await harness.outcomes(of: jobID, tokens: tokens)
        #expect(tokens.allSatisfy { outcomes[$0] != nil }, "\(tokens.map { outcomes[$0] })")
        #expect(fake.pushCounts.values.allSatisfy { $0 == 1 }, "\(fake.pushCounts)")
        #expect(try await harness.job(part.id).progress.attempted == 8)
        await harness.close()
    }

    @Test("a run that fails leaves what it reserved and never handed out to the next run, which sends it")
    func failedRunReleasesItsReservationAhead() async throws {
        // A window of 1 reserves four tokens at a time. The second commit fails for good while the
        // third push waits at APNs: the fourth token was reserved and never handed out.
        let harness = try await EngineHarness(jobs: EngineHarness.jobs(window: 1, batchSize: 1))
        let (jobID, tokens) = try await harness.enqueuedStart(devices: 4)
        let fake = harness.apns(.sandbox)
        fake.holdPushes(after: 2)
        let failing = FailingCommitStore.refusing(commit: 2, of: harness.store)
        let (part, run) = try await harness.runningStartPart(store: failing)
        try await waitUntil("the second commit failed") { failing.commitsFailed == 1 }
        fake.releasePushes()
        await #expect(throws: StoreError.self) { try await run.value }
        #expect(try await harness.job(part.id).reservedThrough.map { $0 < tokens.count } == true)

        #expect(try await harness.runStartPartsOnceTheLeaseLapses() == [.completed])
        let outcomes = try await harness.outcomes(of: jobID, tokens: tokens)
        #expect(outcomes[tokens[0]] == .accepted)
        // Sent, answered, its outcome never committed: it may have arrived, so it is not sent again.
        #expect(outcomes[tokens[1]] == .uncertain)
        #expect(outcomes[tokens[3]] == .accepted && fake.pushCounts[tokens[3]] == 1)
        #expect(fake.pushCounts.values.allSatisfy { $0 == 1 }, "\(fake.pushCounts)")
        await harness.close()
    }

    @Test("a run that gives its lease up (stalled) leaves what it reserved and never handed out to the next run")
    func abandonedRunReleasesItsReservationAhead() async throws {
        // A window of 1 reserves four tokens at a time; the first push is never answered, so the
        // run makes no progress until it gives its lease up (stalled, or its lease could lapse if
        // a renewal is slow to answer on a busy machine: either way it abandons).
        let harness = try await EngineHarness(jobs: EngineHarness.jobs(window: 1))
        let (jobID, tokens) = try await harness.enqueuedStart(devices: 8)
        let fake = harness.apns(.sandbox)
        fake.holdPushes()
        let (part, run) = try await harness.runningStartPart()
        try await waitUntil("the first push is written") { fake.heldPushes == 1 }
        try await waitUntil("the run gives its lease up") {
            harness.clock.advance(by: 1)
            return try await harness.job(part.id).state == .pending
        }
        fake.releasePushes()
        await #expect(throws: FanOutRunAbandoned.self) { try await run.value }

        #expect(try await harness.runStartParts() == [.completed])
        let outcomes = try await harness.outcomes(of: jobID, tokens: tokens)
        // Written, never answered: it may have arrived, so it is not sent again.
        #expect(outcomes[tokens[0]] == .uncertain)
        #expect(
            tokens[1...].allSatisfy { outcomes[$0] == .accepted && fake.pushCounts[$0] == 1 },
            "\(tokens.map { outcomes[$0] })"
        )
        await harness.close()
    }

    @Test("a cancelled start stops at its next commit, keeps what it committed and sends nothing more")
    func cancelStopsPromptly() async throws {
        let harness = try await EngineHarness(jobs: EngineHarness.jobs(window: 1, batchSize: 1))
        let (jobID, tokens) = try await harness.enqueuedStart(devices: 6)
        let fake = harness.apns(.sandbox)
        fake.holdPushes(after: 3)
        let part = try #require(try await harness.leaseStartPart(owner: "worker-a"))
        let handler = harness.startHandler()
        let run = Task { try await handler.run(part, owner: "worker-a", stop: RunStop()) }
        try await waitUntil("three outcomes are committed and the fourth push waits") {
            let committed = try await harness.job(part.id).progress.attempted
            return committed == 3 && fake.heldPushes == 1
        }

        let cancelled = try await harness.starts.cancel(app: harness.app, id: jobID)
        #expect(cancelled.job.state == .cancelled)
        fake.releasePushes()
        await #expect(throws: (any Error).self) { try await run.value }

        #expect(fake.pushes.count == 4)
        #expect(tokens[4...].allSatisfy { fake.pushCounts[$0] == nil })
        let outcomes = try await harness.outcomes(of: jobID, tokens: tokens)
        #expect(tokens[..<3].allSatisfy { outcomes[$0] == .accepted })
        #expect(try await harness.job(part.id).progress.succeeded == 3)
        #expect(try await harness.leaseStartPart(owner: "worker-b") == nil)
        await harness.close()
    }
}
