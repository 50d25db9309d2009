extension Duration {
    /// The pause before retry `step` (1 for the first) of a bounded exponential back-off:
    /// `initial`, doubled for each step after the first, never above `maximum`.
    public static func backoff(initial: Duration, maximum: Duration, step: Int) -> Duration {
        // Past 30 doublings any realistic `initial` is far above any `maximum`; the clamp keeps
        // the shift from overflowing.
        let doublings = min(max(step - 1, 0), 30)
        return min(initial * (1 << doublings), maximum)
    }
}
