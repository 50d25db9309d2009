/// The rule for `aps.timestamp` on a channel or activity: devices ignore an update older than one
/// they applied, so each one sent must be strictly greater than the last, even when the clock
/// stands still or steps back. Stores apply it atomically (read and write in one statement).
public enum MonotonicTimestamp {
    /// `max(now, last + 1)`, in whole seconds.
    public static func next(after last: Int64?, now: Int64) -> Int64 {
        guard let last else { return now }
        return max(now, last + 1)
    }
}
