import Foundation
import MarqueeCore
import SQLiteNIO

extension SQLiteStore {
    @discardableResult
    public func appendBroadcastLog(_ entry: BroadcastLogEntry) async throws -> Int64 {
        let inserted = try await query(Self.insertSQL(onConflictDoNothing: false), Self.binds(entry))
        guard let row = inserted.first else {
            throw StoreError.notFound(entity: "channel", id: entry.channelID.description)
        }
        return try SQLiteColumns(row).int64("id")
    }

    public func appendScheduledBroadcastLog(
        _ entry: BroadcastLogEntry
    ) async throws -> (entry: BroadcastLogEntry, appended: Bool) {
        guard let scheduleID = entry.scheduleID else { throw StoreError.notFound(entity: "schedule", id: "nil") }
        // One writer at a time: the insert and the read of an earlier row cannot interleave with
        // another worker's.
        return try await write { connection in
            if let row = try await connection.query(Self.insertSQL(onConflictDoNothing: true), Self.binds(entry)).first
            {
                var appended = entry
                appended.sequence = try SQLiteColumns(row).int64("id")
                return (appended, true)
            }
            let existing = try await connection.query(
                """
                SELECT \(RowMapping.broadcastLogColumns) FROM broadcast_log WHERE app_id = ? AND channel_id = ? \
                AND schedule_id = ?
                """,
                [.id(entry.appID), .id(entry.channelID), .id(scheduleID)]
            ).first.mapped(RowMapping.broadcastLogEntry)
            guard let existing else { throw StoreError.notFound(entity: "channel", id: entry.channelID.description) }
            return (existing, false)
        }
    }

    private static func insertSQL(onConflictDoNothing: Bool) -> String {
        """
        INSERT INTO broadcast_log (app_id, channel_id, apns_request_id, apns_unique_id, priority, aps_timestamp,
                                   status, reason, latency_us, sent_at, event, downgraded, content_state, alert, \
        schedule_id)
        SELECT c.app_id, c.id, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? FROM channels c WHERE c.app_id = ? AND c.id = ?
        \(onConflictDoNothing ? "ON CONFLICT (schedule_id, channel_id) WHERE schedule_id IS NOT NULL DO NOTHING" : "")
        RETURNING id
        """
    }

    private static func binds(_ entry: BroadcastLogEntry) -> [SQLiteData] {
        [
            .uuid(entry.apnsRequestID), .text(entry.apnsUniqueID), .int(entry.priority.rawValue), .int(entry.timestamp),
            .int(entry.status), .text(entry.reason?.reasonString), .int(entry.latencyMicroseconds), .date(entry.sentAt),
            .text(entry.event.rawValue), .bool(entry.downgraded),
            .text(entry.contentState.map { ColumnCoding.json(.object($0)) }),
            .text(entry.alert.map { ColumnCoding.json(.object($0)) }), .id(entry.scheduleID), .id(entry.appID),
            .id(entry.channelID),
        ]
    }

    public func completeBroadcastLog(
        appID: AppID,
        sequence: Int64,
        status: Int,
        reason: APNSErrorReason?,
        apnsUniqueID: String?,
        latency: Duration
    ) async throws {
        let updated = try await query(
            """
            UPDATE broadcast_log SET status = ?, reason = ?, apns_unique_id = ?, latency_us = ? WHERE app_id = ? \
            AND id = ? RETURNING id
            """,
            [
                .int(status), .text(reason?.reasonString), .text(apnsUniqueID), .int(latency.wholeMicroseconds),
                .id(appID), .int(sequence),
            ]
        )
        guard !updated.isEmpty else { throw StoreError.notFound(entity: "broadcast_log", id: String(sequence)) }
    }

    public func broadcastLog(
        appID: AppID,
        channelID: ChannelID,
        before: Int64?,
        limit: Int
    ) async throws -> [BroadcastLogEntry] {
        try await query(
            """
            SELECT \(RowMapping.broadcastLogColumns) FROM broadcast_log
            WHERE app_id = ? AND channel_id = ? AND id < ? ORDER BY id DESC LIMIT ?
            """,
            [.id(appID), .id(channelID), .int(before ?? Int64.max), .int(max(1, limit))]
        ).mapped(RowMapping.broadcastLogEntry)
    }

    public func broadcastCount(
        appID: AppID,
        channelID: ChannelID,
        priority: APNSPriority,
        since: Date
    ) async throws -> Int {
        let counted = try await query(
            Self.broadcastCountSQL,
            [.id(appID), .id(channelID), .int(priority.rawValue), .date(since)]
        )
        guard let row = counted.first else { return 0 }
        return try SQLiteColumns(row).int("n")
    }

    /// Accepted broadcasts of a channel at a priority since a time, as `n` (binds: app, channel,
    /// priority, since).
    static let broadcastCountSQL = """
        SELECT count(*) AS n FROM broadcast_log
        WHERE app_id = ? AND channel_id = ? AND priority = ? AND status = 200 AND sent_at >= ?
        """

    public func broadcastSummary(appID: AppID, eventID: EventID) async throws -> EventBroadcastSummary {
        // Over every channel the event had (a channel deleted and made again keeps its log).
        let row = try await query(
            """
            SELECT
              (SELECT min(l.sent_at) FROM broadcast_log l JOIN channels c ON c.id = l.channel_id
               WHERE c.app_id = ?1 AND c.event_id = ?2 AND l.event = 'end' AND l.status = 200) AS first_end_at,
              (SELECT l.content_state FROM broadcast_log l JOIN channels c ON c.id = l.channel_id
               WHERE c.app_id = ?1 AND c.event_id = ?2 AND l.status = 200 AND l.content_state IS NOT NULL
               ORDER BY l.id DESC LIMIT 1) AS content_state
            """,
            [.id(appID), .id(eventID)]
        ).first
        guard let row else { return EventBroadcastSummary() }
        let columns = SQLiteColumns(row, entity: "broadcast_log")
        return try EventBroadcastSummary(
            firstEndAt: columns.optionalDate("first_end_at"),
            lastContentState: columns.optionalString("content_state").map {
                try RowMapping.logObject($0, column: "content_state")
            }
        )
    }
}
