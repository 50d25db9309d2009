import Foundation

/// "At most `limit` in any `window`": the events a budget has admitted recently. The device-side
/// push-to-start and priority-10 budgets and APNs' own publishing budgets all count this way.
struct SlidingWindowBudget: Sendable {
    private var admitted: [Date] = []

    /// Counts an event at `now` if fewer than `limit` were admitted in the `window` before it.
    mutating func admit(at now: Date, limit: Int, window: TimeInterval) -> Bool {
        admitted.removeAll { now.timeIntervalSince($0) >= window }
        guard admitted.count < limit else { return false }
        admitted.append(now)
        return true
    }
}
