/// The page source of `APNSClient.send(pages:window:)` threw. It ends the outcomes: thrown by the
/// outcome sequence only after every push the source gave (indices `0..<pushCount`) had its
/// outcome delivered. Per-push failures never take this form; they are `APNSPushOutcome.result`.
public struct APNSPushSourceError<Underlying: Error>: Error {
    /// What the source threw.
    public var underlying: Underlying
    /// Pushes the source gave before it failed. Each has an outcome; nothing after them was sent, so
    /// a caller can resume the audience from here.
    public var pushCount: Int

    public init(underlying: Underlying, pushCount: Int) {
        self.underlying = underlying
        self.pushCount = pushCount
    }
}
