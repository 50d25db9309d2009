import Foundation
import Logging
import MarqueeCore

extension FanOutRunner {
    /// Keeps the lease while the run sends (see `run`): looks every `watchInterval`, on the injected
    /// clock, and does what the `LeaseKeeper` says. Throws `FanOutRunAbandoned` to stop the run at
    /// once; otherwise runs until cancelled.
    func watch(_ context: Context) async throws {
        var renewal: Task<Void, Never>?
        defer { renewal?.cancel() }
        var stopLogged = false
        while true {
            let now = clock.now
            switch context.keeper.withLock({ $0.verdict(now: now) }) {
            case .carryOn:
                break
            case .renew:
                context.keeper.withLock { $0.renewalAsked(at: now) }
                // Apart from the watch: a renewal that never answers must not stop it from seeing the
                // lease run out.
                renewal = Task { await renew(context, askedAt: now) }
            case .stopSending(let fence):
                if !stopLogged {
                    stopLogged = true
                    logger.warning(
                        "fan-out part stops handing out sends; it commits what is in flight and hands its job back",
                        metadata: ["job.id": "\(context.job.id.publicID)", "reason": "\(fence)"]
                    )
                }
                context.stop.raise()
            case .abandon(let fence):
                context.stop.raise()
                throw FanOutRunAbandoned(fence: fence)
            }
            try await clock.sleep(for: configuration.watchInterval)
        }
    }

    func renew(_ context: Context, askedAt: Date) async {
        do {
            let held = try await store.renewJobLease(
                id: context.job.id,
                owner: context.owner,
                now: askedAt,
                leaseDuration: configuration.leaseDuration
            )
            context.keeper.withLock { held ? $0.renewalSucceeded(askedAt: askedAt) : $0.renewalRefused() }
        } catch {
            context.keeper.withLock { $0.renewalFailed(String(describing: error)) }
        }
    }

    /// Gives the lease up after the run stopped at once, saying why in the job's `lastError` and the
    /// log, so that the job resumes from its checkpoint without waiting for the lease to lapse. The
    /// store may be what failed: then the lease lapses instead.
    func giveUp(_ context: Context, _ abandoned: FanOutRunAbandoned) async {
        let why = "\(abandoned.fence); the part gave its lease up and resumes from its checkpoint"
        logger.warning(
            "fan-out part gave its lease up",
            metadata: ["job.id": "\(context.job.id.publicID)", "reason": "\(abandoned.fence)"]
        )
        let now = clock.now
        let permanent = context.job.attempts >= configuration.maximumJobAttempts
        do {
            try await store.failJob(
                id: context.job.id,
                owner: context.owner,
                error: why,
                retryAt: permanent ? nil : now,
                at: now
            )
        } catch {
            logger.warning(
                "giving the lease up failed; it lapses instead",
                metadata: ["job.id": "\(context.job.id.publicID)", "error": "\(String(reflecting: error))"]
            )
        }
    }
}
