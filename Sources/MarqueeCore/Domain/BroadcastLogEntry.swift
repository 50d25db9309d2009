import Foundation

/// One broadcast request to a channel, as sent and answered.
public struct BroadcastLogEntry: Sendable, Hashable {
    public var appID: AppID
    public var channelID: ChannelID
    /// The `apns-request-id` Marquee sent.
    public var apnsRequestID: UUID
    /// The `apns-unique-id` APNs answered with (sandbox only), for the Push Notifications Console.
    public var apnsUniqueID: String?
    public var priority: APNSPriority
    /// The payload's `aps.timestamp`.
    public var timestamp: Int64
    public var status: Int
    public var reason: APNSErrorReason?
    /// From request to response.
    public var latency: Duration
    public var sentAt: Date

    public init(
        appID: AppID,
        channelID: ChannelID,
        apnsRequestID: UUID,
        apnsUniqueID: String?,
        priority: APNSPriority,
        timestamp: Int64,
        status: Int,
        reason: APNSErrorReason?,
        latency: Duration,
        sentAt: Date
    ) {
        self.appID = appID
        self.channelID = channelID
        self.apnsRequestID = apnsRequestID
        self.apnsUniqueID = apnsUniqueID
        self.priority = priority
        self.timestamp = timestamp
        self.status = status
        self.reason = reason
        self.latency = latency
        self.sentAt = sentAt
    }

    /// Latency in whole microseconds, the unit the log stores.
    public var latencyMicroseconds: Int64 {
        let (seconds, attoseconds) = latency.components
        return seconds * 1_000_000 + attoseconds / 1_000_000_000_000
    }
}
