import MarqueeAPNS

/// Everything the engine asks of one app's APNs in one environment: what `APNSClientRegistry` hands
/// out. Services name the narrower protocol they use (`APNSDevicePushing`, `APNSBroadcasting`,
/// `APNSChannelManaging`); the registry also closes what it retires.
public protocol APNSGateway: APNSDevicePushing, APNSBroadcasting, APNSChannelManaging {
    /// Fails what is queued, closes every connection and waits until they are closed.
    func shutdown() async
}

extension APNSClient: APNSGateway {}
