import Foundation
import MarqueeCore
import PostgresNIO

extension PostgresStore {
    @discardableResult
    public func appendBroadcastLog(_ entry: BroadcastLogEntry) async throws -> Int64 {
        let inserted = try await rows(
            PreparedQuery<BroadcastLogAppendShape>(Self.insert(entry, onConflictDoNothing: false))
        )
        guard let row = inserted.first else {
            throw StoreError.notFound(entity: "channel", id: entry.channelID.description)
        }
        return try PostgresColumns(row).int64("id")
    }

    public func appendScheduledBroadcastLog(
        _ entry: BroadcastLogEntry
    ) async throws -> (entry: BroadcastLogEntry, appended: Bool) {
        guard let scheduleID = entry.scheduleID else { throw StoreError.notFound(entity: "schedule", id: "nil") }
        // The unique (schedule_id, channel_id) index decides between two workers; the loser reads
        // the winner's row.
        if let row = try await firstRow(Self.insert(entry, onConflictDoNothing: true)) {
            var appended = entry
            appended.sequence = try PostgresColumns(row).int64("id")
            return (appended, true)
        }
        let existing = try await firstRow(
            """
            SELECT \(unescaped: RowMapping.broadcastLogColumns) FROM broadcast_log
            WHERE app_id = \(entry.appID.uuid) AND channel_id = \(entry.channelID.uuid) AND schedule_id = \
            \(scheduleID.uuid)
            """
        ).mapped(RowMapping.broadcastLogEntry)
        guard let existing else { throw StoreError.notFound(entity: "channel", id: entry.channelID.description) }
        return (existing, false)
    }

    /// Inserts the entry if its channel is the app's (no row returned otherwise, nor on a
    /// scheduled entry's conflict when asked). Without the conflict clause it is prepared
    /// (`BroadcastLogAppendShape`): every parameter is cast to the type it is bound as.
    static func insert(_ entry: BroadcastLogEntry, onConflictDoNothing: Bool) -> PostgresQuery {
        var query: PostgresQuery = """
            INSERT INTO broadcast_log (app_id, channel_id, apns_request_id, apns_unique_id, priority, aps_timestamp,
                                       status, reason, latency_us, sent_at, event, downgraded, content_state, alert, \
            schedule_id)
            SELECT c.app_id, c.id, \(entry.apnsRequestID)::uuid, \(entry.apnsUniqueID)::text,
                   \(entry.priority.rawValue)::bigint, \(entry.timestamp)::bigint, \(entry.status)::bigint,
                   \(entry.reason?.reasonString)::text, \(entry.latencyMicroseconds)::bigint,
                   \(entry.sentAt)::timestamptz, \(entry.event.rawValue)::text, \(entry.downgraded)::boolean,
                   \(entry.contentState.map { ColumnCoding.json(.object($0)) })::text::json,
                   \(entry.alert.map { ColumnCoding.json(.object($0)) })::text::json, \(entry.scheduleID?.uuid)::uuid
            FROM channels c WHERE c.app_id = \(entry.appID.uuid) AND c.id = \(entry.channelID.uuid)
            """
        if onConflictDoNothing {
            query.sql += " ON CONFLICT (schedule_id, channel_id) WHERE schedule_id IS NOT NULL DO NOTHING"
        }
        query.sql += " RETURNING id"
        return query
    }

    public func completeBroadcastLog(
        appID: AppID,
        sequence: Int64,
        status: Int,
        reason: APNSErrorReason?,
        apnsUniqueID: String?,
        latency: Duration
    ) async throws {
        let updated = try await rows(
            """
            UPDATE broadcast_log SET status = \(status), reason = \(reason?.reasonString), apns_unique_id = \
            \(apnsUniqueID),
                                     latency_us = \(latency.wholeMicroseconds)
            WHERE app_id = \(appID.uuid) AND id = \(sequence)
            RETURNING id
            """
        )
        guard !updated.isEmpty else { throw StoreError.notFound(entity: "broadcast_log", id: String(sequence)) }
    }

    public func broadcastLog(
        appID: AppID,
        channelID: ChannelID,
        before: Int64?,
        limit: Int
    ) async throws -> [BroadcastLogEntry] {
        try await rows(
            """
            SELECT \(unescaped: RowMapping.broadcastLogColumns) FROM broadcast_log
            WHERE app_id = \(appID.uuid) AND channel_id = \(channelID.uuid) AND id < \(before ?? Int64.max)
            ORDER BY id DESC LIMIT \(max(1, limit))
            """
        ).mapped(RowMapping.broadcastLogEntry)
    }

    public func broadcastCount(
        appID: AppID,
        channelID: ChannelID,
        priority: APNSPriority,
        since: Date
    ) async throws -> Int {
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

    public func broadcastSummary(appID: AppID, eventID: EventID) async throws -> EventBroadcastSummary {
        // Over every channel the event had (a channel deleted and made again keeps its log).
        let row = try await firstRow(
            """
            SELECT
              (SELECT min(l.sent_at) FROM broadcast_log l JOIN channels c ON c.id = l.channel_id
               WHERE c.app_id = \(appID.uuid) AND c.event_id = \(eventID.uuid) AND l.event = 'end' AND l.status = 200)
                AS first_end_at,
              (SELECT l.content_state::text FROM broadcast_log l JOIN channels c ON c.id = l.channel_id
               WHERE c.app_id = \(appID.uuid) AND c.event_id = \(eventID.uuid) AND l.status = 200
                 AND l.content_state IS NOT NULL
               ORDER BY l.id DESC LIMIT 1) AS content_state
            """
        )
        guard let row else { return EventBroadcastSummary() }
        let columns = PostgresColumns(row, entity: "broadcast_log")
        return try EventBroadcastSummary(
            firstEndAt: columns.optionalDate("first_end_at"),
            lastContentState: columns.optionalString("content_state").map {
                try RowMapping.logObject($0, column: "content_state")
            }
        )
    }
}
