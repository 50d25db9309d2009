import CoreMetrics
import MarqueeCore
import Synchronization

/// Channel counts against Apple's cap, through swift-metrics, whenever a replica counts them
/// (a quota check, a creation or deletion, each janitor sweep):
///
/// - `marquee_channels{app,environment}`: channels that exist (or may) at APNs
/// - `marquee_channel_quota_ratio{app,environment}`: that count / `channels.limit`, 0 to 1
///
/// `app` is the app's bundle ID: unique per deployment, readable in a dashboard, and no secret.
final class ChannelMetrics: Sendable {
    static let channels = "marquee_channels"
    static let quotaRatio = "marquee_channel_quota_ratio"

    private struct Key: Hashable {
        var app: String
        var environment: APNSEnvironment
    }

    private let factory: any MetricsFactory
    private let gauges = Mutex<[Key: (channels: Meter, ratio: Meter)]>([:])

    init(factory: any MetricsFactory) {
        self.factory = factory
    }

    func report(app: App, quota: ChannelQuota) {
        let key = Key(app: app.bundleID, environment: quota.environment)
        let pair = gauges.withLock { gauges in
            if let pair = gauges[key] { return pair }
            let dimensions = [("app", key.app), ("environment", key.environment.rawValue)]
            let pair = (
                channels: Meter(label: Self.channels, dimensions: dimensions, factory: factory),
                ratio: Meter(label: Self.quotaRatio, dimensions: dimensions, factory: factory)
            )
            gauges[key] = pair
            return pair
        }
        pair.channels.set(quota.used)
        pair.ratio.set(min(1, Double(quota.used) / Double(max(1, quota.limit))))
    }
}
