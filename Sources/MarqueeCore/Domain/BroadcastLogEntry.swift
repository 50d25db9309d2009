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
    /// APNs' HTTP status; `0` when no answer came (the connection failed with the request in flight).
    public var status: Int
    public var reason: APNSErrorReason?
    /// From request to response.
    public var latency: Duration
    public var sentAt: Date
    /// `update` or `end`.
    public var event: BroadcastEvent
    /// Whether the priority budget sent it at 5 although 10 was asked for.
    public var downgraded: Bool
    /// The `content-state` it carried: what an automatic end repeats.
    public var contentState: JSONObject?
    /// The `alert` it carried, as APNs got it (`LiveActivityAlert.jsonObject`); `nil` for none.
    public var alert: JSONObject?
    /// The schedule that sent it. A scheduled broadcast is logged before it is sent, with `status`
    /// 0, and at most once per channel: a worker that takes the schedule over finds the entry and
    /// does not send again.
    public var scheduleID: ScheduleID?
    /// The log's own position, assigned by the store on append and set on entries read back; the
    /// cursor of `BroadcastLogStore.broadcastLog(appID:channelID:before:limit:)`.
    public var sequence: Int64?

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
        sentAt: Date,
        event: BroadcastEvent = .update,
        downgraded: Bool = false,
        contentState: JSONObject? = nil,
        alert: JSONObject? = nil,
        scheduleID: ScheduleID? = nil,
        sequence: Int64? = nil
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
        self.event = event
        self.downgraded = downgraded
        self.contentState = contentState
        self.alert = alert
        self.scheduleID = scheduleID
        self.sequence = sequence
    }

    /// Latency in whole microseconds, the unit the log stores.
    public var latencyMicroseconds: Int64 {
        latency.wholeMicroseconds
    }
}
