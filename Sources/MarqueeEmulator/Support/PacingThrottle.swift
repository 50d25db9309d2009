import Foundation

/// "One per `interval`, `burst` at once": the generic cell rate algorithm, which keeps a single date
/// (when the next event would be on schedule) instead of a list of recent events, so a check costs
/// no allocation on the broadcast hot path.
struct PacingThrottle: Sendable {
    private var onSchedule: Date?

    /// Counts an event at `now` unless it comes too soon after the ones before it. A refused event
    /// does not count, so a client that backs off gets through.
    mutating func admit(at now: Date, interval: Double, burst: Int) -> Bool {
        let scheduled = max(onSchedule ?? now, now)
        guard scheduled.timeIntervalSince(now) <= Double(burst - 1) * interval else { return false }
        onSchedule = scheduled.addingTimeInterval(interval)
        return true
    }
}
