import Foundation
import Logging
import MarqueeCore

extension FanOutRunner {
    /// Commits the outcomes waiting if a commit is due (`FanOutStateMachine.commitIsDue`).
    func commitIfDue(_ context: Context, work: some FanOutWork, lane: CommitLane) async throws {
        // Most chunks of outcomes find no commit due: asking first spares them the lane's two actor
        // hops (the lane asks again, for the commit it may let through).
        guard context.machine.withLock({ $0.commitIsDue(now: clock.now) }) else { return }
        try await lane.enter()
        do {
            let batch = context.machine.withLock { machine in
                machine.commitIsDue(now: clock.now) ? machine.takeBatch() : nil
            }
            if let batch, !batch.isEmpty { try await commit(batch, context, work: work) }
        } catch {
            // No batch may be committed after this one (`CommitLane`): nothing more is handed out.
            context.stop.raise()
            await lane.leave(failing: error)
            throw error
        }
        await lane.leave()
    }

    /// Looks for a due commit every `flushInterval` until the round is over.
    func flush(_ context: Context, work: some FanOutWork, lane: CommitLane, until roundOver: RunStop) async throws {
        while try await clock.sleep(for: configuration.flushInterval, unlessRaised: roundOver) {
            try await commitIfDue(context, work: work, lane: lane)
        }
    }

    func commit(_ batch: FanOutStateMachine.Batch, _ context: Context, work: some FanOutWork) async throws {
        let policy = CommitRetryPolicy(
            firstDelay: configuration.commitRetryFirstDelay,
            patience: configuration.leaseDuration
        )
        let started = clock.now
        // One ID for every try: a try that was applied although its answer was lost makes the
        // next one change nothing (its progress would otherwise count twice).
        let commitID = UUID.random()
        var failures = 0
        while true {
            do {
                try await work.commit(batch, commitID: commitID, owner: context.owner)
                break
            } catch {
                failures += 1
                let elapsed = clock.elapsed(since: started)
                guard let delay = policy.delay(afterFailures: failures, error: error, elapsed: elapsed) else {
                    throw error
                }
                logger.warning(
                    "committing a batch of outcomes failed; committing it again rather than sending it again",
                    metadata: [
                        "job.id": "\(context.job.id.publicID)", "error": "\(String(reflecting: error))",
                        "retry_in": "\(delay)",
                    ]
                )
                try await clock.sleep(for: delay)
            }
        }
        context.keeper.withLock { $0.progressed(at: clock.now) }
        metrics.committed(kind: context.job.kind, batch.deliveries)
        await refreshRemaining(of: context.job)
    }
}
