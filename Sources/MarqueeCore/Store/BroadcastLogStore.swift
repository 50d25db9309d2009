/// The record of every broadcast request.
public protocol BroadcastLogStore: Sendable {
    func appendBroadcastLog(_ entry: BroadcastLogEntry) async throws
    /// Newest first.
    func broadcastLog(appID: AppID, channelID: ChannelID, limit: Int) async throws -> [BroadcastLogEntry]
}
