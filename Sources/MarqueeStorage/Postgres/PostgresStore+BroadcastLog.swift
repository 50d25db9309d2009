import Foundation
import MarqueeCore
import PostgresNIO

extension PostgresStore {
    public func appendBroadcastLog(_ entry: BroadcastLogEntry) async throws {
        let inserted = try await rows(
            """
            INSERT INTO broadcast_log (app_id, channel_id, apns_request_id, apns_unique_id, priority, aps_timestamp,
                                       status, reason, latency_us, sent_at)
            SELECT c.app_id, c.id, \(entry.apnsRequestID), \(entry.apnsUniqueID), \(entry.priority.rawValue),
                   \(entry.timestamp), \(entry.status), \(entry.reason?.reasonString), \(entry.latencyMicroseconds),
                   \(entry.sentAt)
            FROM channels c WHERE c.app_id = \(entry.appID.uuid) AND c.id = \(entry.channelID.uuid)
            RETURNING id
            """
        )
        guard !inserted.isEmpty else { throw StoreError.notFound(entity: "channel", id: entry.channelID.description) }
    }

    public func broadcastLog(appID: AppID, channelID: ChannelID, limit: Int) async throws -> [BroadcastLogEntry] {
        try await rows(
            """
            SELECT \(unescaped: RowMapping.broadcastLogColumns) FROM broadcast_log
            WHERE app_id = \(appID.uuid) AND channel_id = \(channelID.uuid)
            ORDER BY id DESC LIMIT \(max(1, limit))
            """
        ).mapped(RowMapping.broadcastLogEntry)
    }
}
