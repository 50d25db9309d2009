/// Throttling of broadcasts per channel, of the kind Apple describes in its forums: limits are
/// dynamic, "roughly one update per second", and a burst answers 429 `TooManyRequests`
/// (`apns-reference.md` §6a). The real numbers are unpublished (UNCONFIRMED); this is a steady
/// rate with a small allowance for bursts, enough for a client to meet 429s it has to back off from.
public struct APNSEmulatorBroadcastThrottle: Sendable, Hashable {
    /// The steady rate: one broadcast per channel per this many seconds.
    public var interval: Double
    /// Broadcasts a channel that was quiet may publish back to back before the rate applies.
    public var burst: Int

    public init(interval: Double = 1, burst: Int = 1) {
        self.interval = max(0, interval)
        self.burst = max(1, burst)
    }
}
