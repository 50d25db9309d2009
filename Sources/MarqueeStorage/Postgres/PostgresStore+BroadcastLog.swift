import Foundation
import MarqueeCore
import PostgresNIO

extension PostgresStore {
    @discardableResult
    public func appendBroadcastLog(_ entry: BroadcastLogEntry) async throws -> Int64 {
        let inserted = try await rows(
            """
            INSERT INTO broadcast_log (app_id, channel_id, apns_request_id, apns_unique_id, priority, aps_timestamp,
                                       status, reason, latency_us, sent_at, event, downgraded)
            SELECT c.app_id, c.id, \(entry.apnsRequestID), \(entry.apnsUniqueID), \(entry.priority.rawValue),
                   \(entry.timestamp), \(entry.status), \(entry.reason?.reasonString), \(entry.latencyMicroseconds),
                   \(entry.sentAt), \(entry.event.rawValue), \(entry.downgraded)
            FROM channels c WHERE c.app_id = \(entry.appID.uuid) AND c.id = \(entry.channelID.uuid)
            RETURNING id
            """
        )
        guard let row = inserted.first else { throw StoreError.notFound(entity: "channel", id: entry.channelID.description) }
        return try PostgresColumns(row).int64("id")
    }

    public func broadcastLog(appID: AppID, channelID: ChannelID, before: Int64?, limit: Int) async throws -> [BroadcastLogEntry] {
        try await rows(
            """
            SELECT \(unescaped: RowMapping.broadcastLogColumns) FROM broadcast_log
            WHERE app_id = \(appID.uuid) AND channel_id = \(channelID.uuid) AND id < \(before ?? Int64.max)
            ORDER BY id DESC LIMIT \(max(1, limit))
            """
        ).mapped(RowMapping.broadcastLogEntry)
    }

    public func broadcastCount(appID: AppID, channelID: ChannelID, priority: APNSPriority, since: Date) async throws -> Int {
        let counted = try await rows(
            """
            SELECT count(*) AS n FROM broadcast_log
            WHERE app_id = \(appID.uuid) AND channel_id = \(channelID.uuid) AND priority = \(priority.rawValue)
              AND status = 200 AND sent_at >= \(since)
            """
        )
        guard let row = counted.first else { return 0 }
        return try PostgresColumns(row).int("n")
    }
}
