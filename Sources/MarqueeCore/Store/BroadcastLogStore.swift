import Foundation

/// The record of every broadcast request.
public protocol BroadcastLogStore: Sendable {
    /// Appends the entry and returns its `sequence`.
    @discardableResult
    func appendBroadcastLog(_ entry: BroadcastLogEntry) async throws -> Int64
    /// Newest first, only entries whose `sequence` is below `before` when given (keyset pagination),
    /// at most `limit`. Entries come back with their `sequence` set.
    func broadcastLog(
        appID: AppID,
        channelID: ChannelID,
        before: Int64?,
        limit: Int
    ) async throws -> [BroadcastLogEntry]
    /// How many broadcasts on the channel APNs accepted (status 200) at `priority` since `since`:
    /// what the priority budget counts, shared by every replica.
    func broadcastCount(appID: AppID, channelID: ChannelID, priority: APNSPriority, since: Date) async throws -> Int

    /// Appends the entry of a scheduled broadcast (`scheduleID` set) before it is sent, unless the
    /// log already has one of that schedule on that channel: returns the entry as logged, with its
    /// `sequence`, and whether it is this call's. Two workers performing one schedule (one took it
    /// over from the other) thus send at most one request per channel.
    func appendScheduledBroadcastLog(
        _ entry: BroadcastLogEntry
    ) async throws -> (entry: BroadcastLogEntry, appended: Bool)
    /// Records APNs' answer on an entry appended before sending.
    func completeBroadcastLog(
        appID: AppID,
        sequence: Int64,
        status: Int,
        reason: APNSErrorReason?,
        apnsUniqueID: String?,
        latency: Duration
    ) async throws
    /// What the event's broadcasts (on any of its channels, deleted ones included) tell its
    /// timeline: the first end APNs accepted, and the newest accepted `content-state`.
    func broadcastSummary(appID: AppID, eventID: EventID) async throws -> EventBroadcastSummary
}

/// What an event's broadcast log says about its activities.
public struct EventBroadcastSummary: Sendable, Hashable {
    /// When APNs first accepted an `end` on one of the event's channels.
    public var firstEndAt: Date?
    /// The `content-state` of the newest broadcast APNs accepted.
    public var lastContentState: JSONObject?

    public init(firstEndAt: Date? = nil, lastContentState: JSONObject? = nil) {
        self.firstEndAt = firstEndAt
        self.lastContentState = lastContentState
    }
}

extension BroadcastLogStore {
    /// The newest `limit` entries.
    public func broadcastLog(appID: AppID, channelID: ChannelID, limit: Int) async throws -> [BroadcastLogEntry] {
        try await broadcastLog(appID: appID, channelID: channelID, before: nil, limit: limit)
    }
}
