import Foundation
import MarqueeCore

/// The rules of channel bookkeeping, apart from any I/O: the quota, when a reservation is stale,
/// when an orphan may be deleted. `ChannelLifecycle`, `ChannelReconciler` and `ChannelJanitor`
/// act on these answers.
public struct ChannelPolicy: Sendable, Hashable {
    /// Apple's cap of channels per app and environment (`CannotCreateChannelConfig` past it).
    public var limit: Int
    /// The share of `limit` at which operators are warned.
    public var warningFraction: Double
    /// A `creating` row older than this belongs to an attempt that died (a crash between APNs'
    /// answer and the commit): it is abandoned, and the channel APNs may have made is found by
    /// reconciliation as an orphan.
    public var creationTimeout: TimeInterval
    /// How long a caller waits for another replica's creation of the same channel to finish.
    public var creationWait: TimeInterval
    /// Orphans (channels at APNs that no row knows) are deleted at APNs once this old.
    public var orphanGracePeriod: TimeInterval

    public init(
        limit: Int = APNSPayloadLimit.channelsPerApp,
        warningFraction: Double = 0.9,
        creationTimeout: TimeInterval = 120,
        creationWait: TimeInterval = 20,
        orphanGracePeriod: TimeInterval = 600
    ) {
        self.limit = max(1, limit)
        self.warningFraction = min(max(warningFraction, 0), 1)
        self.creationTimeout = creationTimeout
        self.creationWait = creationWait
        self.orphanGracePeriod = orphanGracePeriod
    }

    /// The states APNs counts against the cap: every channel that exists (or may exist) at APNs.
    public static let countedStates: Set<ChannelState> = [.creating, .active, .deleting, .orphaned]

    /// The channel count at which the warning starts.
    public var warningAt: Int { Int((Double(limit) * warningFraction).rounded(.up)) }

    /// The quota as it stands with `used` channels.
    public func quota(environment: APNSEnvironment, used: Int) -> ChannelQuota {
        ChannelQuota(environment: environment, used: used, limit: limit, warningAt: warningAt)
    }

    /// Whether a `creating` row was abandoned by its creator.
    public func isAbandoned(_ channel: BroadcastChannel, now: Date) -> Bool {
        channel.state == .creating && now.timeIntervalSince(channel.updatedAt) >= creationTimeout
    }

    /// Whether an orphan has waited long enough to be deleted at APNs.
    public func orphanIsDue(_ channel: BroadcastChannel, now: Date) -> Bool {
        channel.state == .orphaned && now.timeIntervalSince(channel.createdAt) >= orphanGracePeriod
    }
}

/// Channels counted against Apple's cap in one environment.
public struct ChannelQuota: Sendable, Hashable {
    public var environment: APNSEnvironment
    public var used: Int
    public var limit: Int
    public var warningAt: Int

    public var isWarning: Bool { used >= warningAt }
    public var isExhausted: Bool { used >= limit }
}
