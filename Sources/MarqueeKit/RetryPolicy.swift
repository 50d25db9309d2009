import Foundation

/// Whether a failed request is tried again, and when: a pure decision, so that it is tested
/// without a network or a clock.
///
/// Every request MarqueeKit sends is an idempotent PUT, so a repeat never does a thing twice. It
/// tries again what time can mend (no answer, 408, 429, 5xx) and nothing a person must mend (401,
/// 403, 422). It honours `Retry-After` to the second, never earlier; a wait longer than
/// `longestWait` is not waited out at all: an app woken by a background push has about 30
/// seconds, and what is left unsent is sent by the next reconciliation.
public struct RetryPolicy: Sendable, Equatable {
    /// Attempts in all, the first included.
    public var maxAttempts: Int
    /// The wait after the first failure without `Retry-After`; it doubles with each attempt.
    public var initialBackoff: Duration
    /// The longest wait it will take, asked for or not.
    public var longestWait: Duration
    /// At most this much is added to each wait, spread by the caller's random fraction, so
    /// that devices woken together (one background push to thousands) do not retry together.
    public var jitter: Duration

    public enum Decision: Sendable, Equatable {
        case retry(after: Duration)
        case giveUp
    }

    public init(
        maxAttempts: Int = 4,
        initialBackoff: Duration = .seconds(1),
        longestWait: Duration = .seconds(20),
        jitter: Duration = .seconds(1)
    ) {
        self.maxAttempts = maxAttempts
        self.initialBackoff = initialBackoff
        self.longestWait = longestWait
        self.jitter = jitter
    }

    /// What to do after `attempt` (1 for the first) failed with `failure`.
    ///
    /// - Parameters:
    ///   - now: the time `Retry-After` dates count from.
    ///   - randomFraction: in 0..<1, the share of `jitter` added to the wait.
    public func decide(after failure: MarqueeKitError, attempt: Int, now: Date, randomFraction: Double) -> Decision {
        guard attempt < maxAttempts else { return .giveUp }
        let backoff = initialBackoff * (1 << min(attempt - 1, 16))
        let asked: Duration?
        switch failure {
        case .invalidArgument:
            return .giveUp
        case .unreachable:
            asked = nil
        case .rejected(let rejection):
            guard Self.isTransient(rejection.status) else { return .giveUp }
            asked = rejection.retryAfter?.delay(from: now)
        }
        let spread = jitter * min(max(randomFraction, 0), 1)
        let wait = (asked ?? min(backoff, longestWait)) + spread
        // A wait asked for is taken whole or not at all; the jitter alone never makes it too long.
        guard (asked ?? .zero) <= longestWait else { return .giveUp }
        return .retry(after: wait)
    }

    /// Statuses that time can mend.
    static func isTransient(_ status: Int) -> Bool {
        status == 408 || status == 429 || status == 500 || status == 502 || status == 503 || status == 504
    }
}
