import MarqueeAPNS

/// What the engine asks of APNs to publish on a broadcast channel.
public protocol APNSBroadcasting: AnyObject, Sendable {
    /// Publishes on a channel and returns APNs' request ID for it.
    func broadcast(_ broadcast: APNSBroadcast) async throws(APNSError) -> APNSBroadcastResult
}

extension APNSClient: APNSBroadcasting {}
