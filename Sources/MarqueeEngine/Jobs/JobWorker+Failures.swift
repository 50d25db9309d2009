import Foundation
import Logging
import MarqueeCore

extension JobWorker {
    /// Records a failed run and releases its lease, so the job resumes without waiting for the lease
    /// to lapse. The failure is often the store's own (PostgreSQL restarting, a connection closed):
    /// the release is tried again with growing pauses for at most half a lease, after which the
    /// lease is left to lapse. Returns whether it was recorded.
    func recordFailure(of job: Job, owner: String, error: any Error, retryAt: Date?, logger: Logger) async -> Bool {
        let policy = CommitRetryPolicy(patience: configuration.leaseDuration / 2)
        let started = clock.now
        var failures = 0
        while true {
            do {
                try await store.failJob(id: job.id, owner: owner, error: "\(error)", retryAt: retryAt, at: clock.now)
                return true
            } catch let failure {
                failures += 1
                let elapsed = clock.elapsed(since: started)
                guard let delay = policy.delay(afterFailures: failures, error: failure, elapsed: elapsed) else {
                    logger.warning(
                        "recording the failure failed; the job's lease lapses and the job resumes then",
                        metadata: ["error": "\(String(reflecting: failure))"]
                    )
                    return false
                }
                // Not a sleep of this task's: a cancelled run still tries to release its lease.
                await Task { try? await clock.sleep(for: delay) }.value
            }
        }
    }
}
