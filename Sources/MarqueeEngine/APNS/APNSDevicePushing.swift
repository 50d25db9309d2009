import MarqueeAPNS

/// What the engine asks of APNs to reach devices: one push, a fan-out of pushes, or an audience read
/// page by page. `APNSClient` is the real one; tests stand in for it without a socket.
///
/// Class-bound: the client registry tells clients apart by identity to count who holds which.
public protocol APNSDevicePushing: AnyObject, Sendable {
    /// Sends one push and waits for APNs' answer.
    func send(_ push: APNSDevicePush) async throws(APNSError) -> APNSDeviceResult

    /// Sends many pushes with at most `window` outstanding, the outcomes in chunks.
    func send<Pushes: Sequence & Sendable>(
        _ pushes: Pushes,
        window: Int?
    ) -> APNSPushOutcomes where Pushes.Element == APNSDevicePush

    /// Sends an audience arriving in pages with at most `window` outstanding, the outcomes in chunks;
    /// a failing source ends the outcomes with `APNSPushSourceError` after what it gave.
    func send<Pages: AsyncSequence & Sendable>(
        pages: Pages,
        window: Int?
    ) -> APNSPagedPushOutcomes<Pages.Failure> where Pages.Element == [APNSDevicePush]
}

extension APNSClient: APNSDevicePushing {}
