import MarqueeCore

/// When a fan-out batch whose commit failed is committed again, rather than failing the run.
///
/// A failed run is resumed from its checkpoint, which sends its uncommitted window again: right
/// after a crash that is the price of never losing a send, but for a store that was briefly
/// unreachable (a connection dropped, a pool waiting out its connection attempts) it would start
/// every device of the window a second time. The outcomes are still in memory, so the batch is
/// committed again instead, with growing pauses, for as long as the lease would last. The store's
/// own refusals (`StoreError`: the lease lost, a row gone) are final, and so is cancellation. A
/// commit that was applied although its answer was lost is sent again with the same commit ID, and
/// the store changes nothing for it the second time (its progress counted once: the job's totals
/// equal its tokens).
struct CommitRetryPolicy: Sendable, Hashable {
    /// The pause after the first failure; each later one doubles, up to `maximumDelay`.
    var firstDelay: Duration = Self.standardFirstDelay
    /// The first pause a run uses unless its configuration says otherwise.
    static let standardFirstDelay: Duration = .milliseconds(100)
    var maximumDelay: Duration = .seconds(2)
    /// How long a batch keeps being tried, from its first failure.
    var patience: Duration

    /// The pause before attempt `failures + 1`, after `failures` failed attempts (the last with
    /// `error`), `elapsed` after the first; nil when the error is final or patience is spent.
    func delay(afterFailures failures: Int, error: any Error, elapsed: Duration) -> Duration? {
        if error is StoreError || error is CancellationError { return nil }
        let delay = Duration.backoff(initial: firstDelay, maximum: maximumDelay, step: failures)
        guard elapsed + delay <= patience else { return nil }
        return delay
    }
}
