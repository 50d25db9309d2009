import MarqueeCore

/// Bounded exponential back-off with full jitter, for requests classed `retryLater` and for reconnects.
public struct APNSRetryPolicy: Sendable, Hashable {
    /// Attempts per request in all, the first included. 1 disables retries.
    public var maximumAttempts: Int
    /// The delay before the first retry (before jitter).
    public var initialDelay: Duration
    /// The largest delay, however many attempts came before.
    public var maximumDelay: Duration
    /// Consecutive failed connection attempts after which queued requests fail with `connectionFailed`.
    public var maximumConnectAttempts: Int

    public init(
        maximumAttempts: Int = 4,
        initialDelay: Duration = .milliseconds(200),
        maximumDelay: Duration = .seconds(30),
        maximumConnectAttempts: Int = 6
    ) {
        self.maximumAttempts = max(1, maximumAttempts)
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
        self.maximumConnectAttempts = max(1, maximumConnectAttempts)
    }

    /// The delay before retry number `retry` (1 for the first retry): a random point in
    /// `0 ... min(maximumDelay, initialDelay * 2^(retry-1))`, so that many clients failing together
    /// do not come back together.
    public func delay<G: RandomNumberGenerator>(beforeRetry retry: Int, using generator: inout G) -> Duration {
        let ceiling = ceilingDelay(beforeRetry: retry)
        let nanoseconds = ceiling.wholeNanoseconds
        guard nanoseconds > 0 else { return .zero }
        return .nanoseconds(Int64.random(in: 0...nanoseconds, using: &generator))
    }

    public func delay(beforeRetry retry: Int) -> Duration {
        var generator = SystemRandomNumberGenerator()
        return delay(beforeRetry: retry, using: &generator)
    }

    /// The upper bound of the jittered delay before retry number `retry`.
    public func ceilingDelay(beforeRetry retry: Int) -> Duration {
        .backoff(initial: initialDelay, maximum: maximumDelay, step: retry)
    }
}
