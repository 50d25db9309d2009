import Foundation
import MarqueeCore
import SQLiteNIO

extension SQLiteStore {
    public func appendBroadcastLog(_ entry: BroadcastLogEntry) async throws {
        let inserted = try await query(
            """
            INSERT INTO broadcast_log (app_id, channel_id, apns_request_id, apns_unique_id, priority, aps_timestamp,
                                       status, reason, latency_us, sent_at)
            SELECT c.app_id, c.id, ?, ?, ?, ?, ?, ?, ?, ? FROM channels c WHERE c.app_id = ? AND c.id = ?
            RETURNING id
            """,
            [
                .uuid(entry.apnsRequestID), .text(entry.apnsUniqueID), .int(entry.priority.rawValue), .int(entry.timestamp),
                .int(entry.status), .text(entry.reason?.reasonString), .int(entry.latencyMicroseconds), .date(entry.sentAt),
                .id(entry.appID), .id(entry.channelID),
            ]
        )
        guard !inserted.isEmpty else { throw StoreError.notFound(entity: "channel", id: entry.channelID.description) }
    }

    public func broadcastLog(appID: AppID, channelID: ChannelID, limit: Int) async throws -> [BroadcastLogEntry] {
        try await query(
            """
            SELECT \(RowMapping.broadcastLogColumns) FROM broadcast_log
            WHERE app_id = ? AND channel_id = ? ORDER BY id DESC LIMIT ?
            """,
            [.id(appID), .id(channelID), .int(max(1, limit))]
        ).mapped(RowMapping.broadcastLogEntry)
    }
}
