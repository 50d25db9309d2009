import Foundation

/// The rate bound of late-join starts on one replica: a token bucket of `ratePerSecond`, holding a
/// second's worth at most, so that a storm of registrations (an app release) is sent at that rate
/// and never takes the job worker and APNs connections from broadcasts, while a quiet match's few
/// late joiners go at once. Pure: the caller passes the time.
struct LateJoinRate: Sendable, Hashable {
    let ratePerSecond: Double
    /// Starts that may go now (fractional between refills).
    private(set) var available: Double
    private var refilledAt: Date

    init(ratePerSecond: Int, now: Date) {
        self.ratePerSecond = Double(max(1, ratePerSecond))
        available = self.ratePerSecond
        refilledAt = now
    }

    /// The capacity: one second's worth.
    var burst: Double { ratePerSecond }

    /// How many starts may be claimed now.
    mutating func allowance(now: Date) -> Int {
        refill(now: now)
        return Int(available.rounded(.down))
    }

    /// Spends `count` starts of the allowance.
    mutating func spend(_ count: Int, now: Date) {
        refill(now: now)
        available = max(0, available - Double(count))
    }

    /// How long until at least one start may go (zero if one may now).
    mutating func wait(now: Date) -> Duration {
        refill(now: now)
        guard available < 1 else { return .zero }
        return .milliseconds(Int64(((1 - available) / ratePerSecond * 1000).rounded(.up)))
    }

    private mutating func refill(now: Date) {
        let elapsed = now.timeIntervalSince(refilledAt)
        guard elapsed > 0 else { return }
        available = min(burst, available + elapsed * ratePerSecond)
        refilledAt = now
    }
}
