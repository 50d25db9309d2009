import Foundation
import MarqueeCore
import SQLiteNIO

extension SQLiteStore {
    @discardableResult
    public func appendBroadcastLog(_ entry: BroadcastLogEntry) async throws -> Int64 {
        let inserted = try await query(
            """
            INSERT INTO broadcast_log (app_id, channel_id, apns_request_id, apns_unique_id, priority, aps_timestamp,
                                       status, reason, latency_us, sent_at, event, downgraded)
            SELECT c.app_id, c.id, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? FROM channels c WHERE c.app_id = ? AND c.id = ?
            RETURNING id
            """,
            [
                .uuid(entry.apnsRequestID), .text(entry.apnsUniqueID), .int(entry.priority.rawValue), .int(entry.timestamp),
                .int(entry.status), .text(entry.reason?.reasonString), .int(entry.latencyMicroseconds), .date(entry.sentAt),
                .text(entry.event.rawValue), .bool(entry.downgraded), .id(entry.appID), .id(entry.channelID),
            ]
        )
        guard let row = inserted.first else { throw StoreError.notFound(entity: "channel", id: entry.channelID.description) }
        return try SQLiteColumns(row).int64("id")
    }

    public func broadcastLog(appID: AppID, channelID: ChannelID, before: Int64?, limit: Int) async throws -> [BroadcastLogEntry] {
        try await query(
            """
            SELECT \(RowMapping.broadcastLogColumns) FROM broadcast_log
            WHERE app_id = ? AND channel_id = ? AND id < ? ORDER BY id DESC LIMIT ?
            """,
            [.id(appID), .id(channelID), .int(before ?? Int64.max), .int(max(1, limit))]
        ).mapped(RowMapping.broadcastLogEntry)
    }

    public func broadcastCount(appID: AppID, channelID: ChannelID, priority: APNSPriority, since: Date) async throws -> Int {
        let counted = try await query(
            """
            SELECT count(*) AS n FROM broadcast_log
            WHERE app_id = ? AND channel_id = ? AND priority = ? AND status = 200 AND sent_at >= ?
            """,
            [.id(appID), .id(channelID), .int(priority.rawValue), .date(since)]
        )
        guard let row = counted.first else { return 0 }
        return try SQLiteColumns(row).int("n")
    }
}
