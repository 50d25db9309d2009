import Foundation

/// The record of every broadcast request.
public protocol BroadcastLogStore: Sendable {
    /// Appends the entry and returns its `sequence`.
    @discardableResult
    func appendBroadcastLog(_ entry: BroadcastLogEntry) async throws -> Int64
    /// Newest first, only entries whose `sequence` is below `before` when given (keyset pagination),
    /// at most `limit`. Entries come back with their `sequence` set.
    func broadcastLog(appID: AppID, channelID: ChannelID, before: Int64?, limit: Int) async throws -> [BroadcastLogEntry]
    /// How many broadcasts on the channel APNs accepted (status 200) at `priority` since `since`:
    /// what the priority budget counts, shared by every replica.
    func broadcastCount(appID: AppID, channelID: ChannelID, priority: APNSPriority, since: Date) async throws -> Int
}

extension BroadcastLogStore {
    /// The newest `limit` entries.
    public func broadcastLog(appID: AppID, channelID: ChannelID, limit: Int) async throws -> [BroadcastLogEntry] {
        try await broadcastLog(appID: appID, channelID: channelID, before: nil, limit: limit)
    }
}
