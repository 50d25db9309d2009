import Foundation
import Logging
import MarqueeCore
import PostgresNIO

extension PostgresStore {
    public func nextEventTimestamp(
        appID: AppID,
        eventID: EventID,
        environment: APNSEnvironment,
        now: Int64
    ) async throws -> Int64 {
        // One statement: concurrent callers serialize on the row and get distinct values.
        guard
            let row = try await firstRow(
                """
                INSERT INTO event_timestamps AS s (event_id, environment, last_timestamp)
                SELECT e.id, \(environment.rawValue), \(now) FROM events e WHERE e.app_id = \(appID.uuid) AND e.id = \
                \(eventID.uuid)
                ON CONFLICT (event_id, environment) DO UPDATE SET last_timestamp = GREATEST(\(now), s.last_timestamp \
                + 1)
                RETURNING s.last_timestamp
                """
            )
        else { throw StoreError.notFound(entity: "event", id: eventID.description) }
        return try row.decode(Int64.self)
    }

    public func startingActivity(
        appID: AppID,
        eventID: EventID,
        environment: APNSEnvironment,
        pushToStartToken: String
    ) async throws -> Activity? {
        guard
            let row = try await firstRow(
                """
                SELECT a.id FROM activities a
                JOIN push_to_start_tokens t ON t.id = a.push_to_start_token_id
                WHERE a.app_id = \(appID.uuid) AND a.event_id = \(eventID.uuid) AND a.environment = \
                \(environment.rawValue)
                  AND a.state = 'starting' AND a.activity_id IS NULL AND t.token = \(pushToStartToken)
                ORDER BY a.created_at DESC LIMIT 1
                """
            )
        else { return nil }
        return try await activity(appID: appID, id: ActivityRecordID(try row.decode(UUID.self)))
    }

    public func updateAudiencePage(
        _ query: ActivityUpdateQuery,
        after cursor: Int64,
        limit: Int
    ) async throws -> [ActivityUpdateTarget] {
        var targets: [ActivityUpdateTarget] = []
        let result = try await rows(
            Self.updateAudience(
                query,
                select: """
                    SELECT a.seq, a.id, u.token, a.last_timestamp_sent, a.frequent_pushes_enabled,
                           a.priority10_window_start, a.priority10_sent
                    """,
                after: cursor,
                tail: "ORDER BY a.seq LIMIT \(max(1, limit))"
            )
        )
        for row in result {
            let (seq, id, token, last, frequent, windowStart, sent) = try row.decode(
                (Int64, UUID, String, Int64?, Bool, Date?, Int).self
            )
            targets.append(
                ActivityUpdateTarget(
                    rowID: seq,
                    id: ActivityRecordID(id),
                    token: token,
                    lastTimestampSent: last,
                    frequentPushesEnabled: frequent,
                    priorityWindow: windowStart.map { ActivityPriorityWindow(start: $0, sent: sent) }
                )
            )
        }
        return targets
    }

    public func updateAudience(_ query: ActivityUpdateQuery) async throws -> ActivityUpdateAudience {
        let result = try await rows(
            Self.updateAudience(query, select: "SELECT count(*), max(a.last_timestamp_sent)", after: 0, tail: "")
        )
        for row in result {
            let (count, latest) = try row.decode((Int64, Int64?).self)
            return ActivityUpdateAudience(count: count, latestTimestamp: latest)
        }
        return ActivityUpdateAudience(count: 0, latestTimestamp: nil)
    }

    /// Served by the partial index activities_update_audience, in `seq` order.
    static func updateAudience(
        _ query: ActivityUpdateQuery,
        select: String,
        after cursor: Int64,
        tail: String
    ) -> PostgresQuery {
        """
        \(unescaped: select)
        FROM \(unescaped: RowMapping.updateAudienceSource)
        WHERE a.app_id = \(query.appID.uuid) AND a.event_id = \(query.eventID.uuid) AND a.environment = \
        \(query.environment.rawValue)
          AND \(unescaped: RowMapping.updateAudienceCondition) AND a.seq > \(cursor)
          AND (\(query.sentBefore)::bigint IS NULL OR a.last_timestamp_sent IS NULL OR a.last_timestamp_sent < \
        \(query.sentBefore))
        \(unescaped: tail)
        """
    }

    public func commitActivityUpdateBatch(_ batch: ActivityUpdateBatch, at: Date) async throws {
        try await transaction { connection in
            // A batch already applied (its answer lost, then sent again) changes nothing.
            guard
                try await holdLease(
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
            if !batch.accepted.isEmpty {
                // What was sent is max(job's timestamp, last + 1); recording it (or more, when a
                // newer job got there first) keeps every later push strictly after it.
                try await connection.query(
                    """
                    UPDATE activities
                    SET last_timestamp_sent = GREATEST(COALESCE(last_timestamp_sent, 0) + 1, \(batch.timestamp)), \
                    updated_at = \(at)
                    WHERE app_id = \(batch.appID.uuid) AND seq = ANY(\(batch.accepted)::bigint[])
                    """,
                    logger: logger
                )
            }
            if !batch.acceptedAtImmediate.isEmpty {
                // One more in the activity's window, or a new window from now when it has none or
                // its window is over (SET reads the row as it was, so both columns see the old start).
                try await connection.query(
                    """
                    UPDATE activities
                    SET priority10_window_start = CASE
                            WHEN priority10_window_start IS NULL OR priority10_window_start <= \
                    \(batch.priorityWindowsEndedAt)
                            THEN \(at) ELSE priority10_window_start END,
                        priority10_sent = CASE
                            WHEN priority10_window_start IS NULL OR priority10_window_start <= \
                    \(batch.priorityWindowsEndedAt)
                            THEN 1 ELSE priority10_sent + 1 END
                    WHERE app_id = \(batch.appID.uuid) AND seq = ANY(\(batch.acceptedAtImmediate)::bigint[])
                    """,
                    logger: logger
                )
            }
            if !batch.ended.isEmpty {
                try await connection.query(
                    """
                    UPDATE activities SET state = 'ended', updated_at = \(at)
                    WHERE app_id = \(batch.appID.uuid) AND seq = ANY(\(batch.ended)::bigint[])
                    """,
                    logger: logger
                )
            }
            try await Self.endActivities(invalidating: batch, at: at, on: connection, logger: logger)
            try await addProgress(
                batch.progress,
                checkpoint: batch.checkpoint,
                commitID: batch.commitID,
                jobID: batch.jobID,
                at: at,
                on: connection
            )
        }
    }

    /// Within an activity-update commit: each 410 the batch carries ends its activity only if it
    /// names the activity's current update token, received no later than APNs' verdict
    /// (`RowMapping.endActivityOnInvalidatedUpdateToken`).
    static func endActivities(
        invalidating batch: ActivityUpdateBatch,
        at: Date,
        on connection: PostgresConnection,
        logger: Logger
    ) async throws {
        for (row, invalidation) in batch.invalidatedUpdateTokens.sorted(by: { $0.key < $1.key }) {
            var binds = PostgresBindings(capacity: 5)
            binds.append(at)
            binds.append(batch.appID.uuid)
            binds.append(row)
            binds.append(invalidation.token)
            binds.append(invalidation.invalidSince)
            try await connection.query(
                PostgresQuery(
                    unsafeSQL: RowMapping.endActivityOnInvalidatedUpdateToken(seqColumn: "seq") { "$\($0)" },
                    binds: binds
                ),
                logger: logger
            )
        }
    }
}
