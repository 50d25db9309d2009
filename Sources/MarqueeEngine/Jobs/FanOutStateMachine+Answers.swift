import Foundation
import MarqueeCore

/// What the machine answers without changing: what is due, when, and how much waits.
extension FanOutStateMachine {
    /// The token rows whose retry is due at `now`: a start job asks the start ledger which of them
    /// have started since (another job of the event), and passes them to `retriesDue`.
    func retryRowsDue(now: Date) -> [Int64] {
        waitingForRetry.filter { $0.readyAt <= now }.map(\.send.tokenRowID)
    }

    /// The back-off before the retry that follows `attempt` (doubling, within the configured bounds).
    func retryDelay(afterAttempt attempt: Int) -> TimeInterval {
        Duration.backoff(
            initial: configuration.retryBaseDelay,
            maximum: configuration.retryMaximumDelay,
            step: attempt
        ).timeInterval
    }

    /// Whether the outcomes waiting should be committed now: a batch's worth of them, or any that
    /// has waited `commitInterval`.
    func commitIsDue(now: Date) -> Bool {
        guard let oldestPendingAt, !pending.deliveries.isEmpty else { return false }
        return pending.deliveries.count >= configuration.batchSize
            || now >= oldestPendingAt.addingTimeInterval(configuration.commitInterval.timeInterval)
    }

    /// What to do after a round, once its batch is committed.
    func nextStep(now: Date) -> NextStep {
        guard let earliest = waitingForRetry.map(\.readyAt).min() else { return .complete }
        if waitingForRetry.count > configuration.retryBacklogLimit { return .rescheduleJob(at: earliest) }
        return .retry(at: earliest)
    }

    /// Whether the retry backlog is past its limit (the runner stops feeding pages then).
    var retryBacklogIsFull: Bool { waitingForRetry.count > configuration.retryBacklogLimit }

    var waitingForRetryCount: Int { waitingForRetry.count }
    var inFlightCount: Int { round.count }
}
