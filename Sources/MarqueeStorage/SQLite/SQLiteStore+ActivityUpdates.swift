import Foundation
import MarqueeCore
import SQLiteNIO

extension SQLiteStore {
    public func nextEventTimestamp(
        appID: AppID,
        eventID: EventID,
        environment: APNSEnvironment,
        now: Int64
    ) async throws -> Int64 {
        let rows = try await query(
            """
            INSERT INTO event_timestamps (event_id, environment, last_timestamp)
            SELECT e.id, ?1, ?2 FROM events e WHERE e.app_id = ?3 AND e.id = ?4
            ON CONFLICT (event_id, environment) DO UPDATE SET last_timestamp = MAX(?2, \
            event_timestamps.last_timestamp + 1)
            RETURNING last_timestamp
            """,
            [.text(environment.rawValue), .int(now), .id(appID), .id(eventID)]
        )
        guard let row = rows.first else { throw StoreError.notFound(entity: "event", id: eventID.description) }
        return try SQLiteColumns(row, entity: "event").int64("last_timestamp")
    }

    public func startingActivity(
        appID: AppID,
        eventID: EventID,
        environment: APNSEnvironment,
        pushToStartToken: String
    ) async throws -> Activity? {
        let rows = try await query(
            """
            SELECT a.id FROM activities a
            JOIN push_to_start_tokens t ON t.id = a.push_to_start_token_id
            WHERE a.app_id = ? AND a.event_id = ? AND a.environment = ? AND a.state = 'starting' AND a.activity_id IS \
            NULL
              AND t.token = ?
            ORDER BY a.created_at DESC LIMIT 1
            """,
            [.id(appID), .id(eventID), .text(environment.rawValue), .text(pushToStartToken)]
        )
        guard let row = rows.first else { return nil }
        return try await activity(
            appID: appID,
            id: ActivityRecordID(try SQLiteColumns(row, entity: "activity").uuid("id"))
        )
    }

    public func updateAudiencePage(
        _ query: ActivityUpdateQuery,
        after cursor: Int64,
        limit: Int
    ) async throws -> [ActivityUpdateTarget] {
        let (filter, binds) = Self.updateAudienceFilter(query, after: cursor)
        let rows = try await self.query(
            """
            SELECT a.rowid AS seq, a.id, u.token, a.last_timestamp_sent, a.frequent_pushes_enabled,
                   a.priority10_window_start, a.priority10_sent
            FROM \(RowMapping.updateAudienceSource)
            WHERE \(filter) ORDER BY a.rowid LIMIT ?\(binds.count + 1)
            """,
            binds + [.int(max(1, limit))]
        )
        return try rows.map { row in
            let columns = SQLiteColumns(row, entity: "activity")
            return ActivityUpdateTarget(
                rowID: try columns.int64("seq"),
                id: ActivityRecordID(try columns.uuid("id")),
                token: try columns.string("token"),
                lastTimestampSent: try columns.optionalInt64("last_timestamp_sent"),
                frequentPushesEnabled: try columns.bool("frequent_pushes_enabled"),
                priorityWindow: try columns.optionalDate("priority10_window_start").map {
                    ActivityPriorityWindow(start: $0, sent: try columns.int("priority10_sent"))
                }
            )
        }
    }

    public func updateAudience(_ query: ActivityUpdateQuery) async throws -> ActivityUpdateAudience {
        let (filter, binds) = Self.updateAudienceFilter(query, after: 0)
        let rows = try await self.query(
            """
            SELECT count(*) AS count, max(a.last_timestamp_sent) AS latest
            FROM \(RowMapping.updateAudienceSource)
            WHERE \(filter)
            """,
            binds
        )
        guard let row = rows.first else { return ActivityUpdateAudience(count: 0, latestTimestamp: nil) }
        let columns = SQLiteColumns(row, entity: "activity")
        return ActivityUpdateAudience(
            count: try columns.int64("count"),
            latestTimestamp: try columns.optionalInt64("latest")
        )
    }

    /// The conditions on `a`, with binds ?1 to ?5.
    static func updateAudienceFilter(_ query: ActivityUpdateQuery, after cursor: Int64) -> (String, [SQLiteData]) {
        (
            """
            a.app_id = ?1 AND a.event_id = ?2 AND a.environment = ?3 AND \(RowMapping.updateAudienceCondition)
              AND a.rowid > ?4 AND (?5 IS NULL OR a.last_timestamp_sent IS NULL OR a.last_timestamp_sent < ?5)
            """,
            [
                .id(query.appID), .id(query.eventID), .text(query.environment.rawValue), .int(cursor),
                .int(query.sentBefore),
            ]
        )
    }

    public func commitActivityUpdateBatch(_ batch: ActivityUpdateBatch, at: Date) async throws {
        try await write { connection in
            // A batch already applied (its answer lost, then sent again) changes nothing.
            guard
                try await Self.holdLease(
                    appID: batch.appID,
                    jobID: batch.jobID,
                    owner: batch.leaseOwner,
                    commitID: batch.commitID,
                    at: at,
                    on: connection
                )
            else {
                return
            }
            for row in batch.accepted {
                // What was sent is max(job's timestamp, last + 1); see the PostgreSQL store.
                _ = try await connection.query(
                    """
                    UPDATE activities SET last_timestamp_sent = MAX(COALESCE(last_timestamp_sent, 0) + 1, ?1), \
                    updated_at = ?2
                    WHERE app_id = ?3 AND rowid = ?4
                    """,
                    [.int(batch.timestamp), .date(at), .id(batch.appID), .int(row)]
                )
            }
            for row in batch.acceptedAtImmediate {
                // One more in the activity's window, or a new one; see the PostgreSQL store.
                _ = try await connection.query(
                    """
                    UPDATE activities
                    SET priority10_window_start = CASE
                            WHEN priority10_window_start IS NULL OR priority10_window_start <= ?1 THEN ?2 ELSE \
                    priority10_window_start END,
                        priority10_sent = CASE
                            WHEN priority10_window_start IS NULL OR priority10_window_start <= ?1 THEN 1 ELSE \
                    priority10_sent + 1 END
                    WHERE app_id = ?3 AND rowid = ?4
                    """,
                    [.date(batch.priorityWindowsEndedAt), .date(at), .id(batch.appID), .int(row)]
                )
            }
            for row in batch.ended {
                _ = try await connection.query(
                    "UPDATE activities SET state = 'ended', updated_at = ? WHERE app_id = ? AND rowid = ?",
                    [.date(at), .id(batch.appID), .int(row)]
                )
            }
            for (row, invalidation) in batch.invalidatedUpdateTokens.sorted(by: { $0.key < $1.key }) {
                _ = try await connection.query(
                    RowMapping.endActivityOnInvalidatedUpdateToken(seqColumn: "rowid") { "?\($0)" },
                    [
                        .date(at), .id(batch.appID), .int(row), .text(invalidation.token),
                        .date(invalidation.invalidSince),
                    ]
                )
            }
            try await Self.addProgress(
                batch.progress,
                checkpoint: batch.checkpoint,
                commitID: batch.commitID,
                jobID: batch.jobID,
                at: at,
                on: connection
            )
        }
    }
}
