import Foundation
import MarqueeCore
import PostgresNIO

extension PostgresStore {
    public func recordActivity(_ activity: Activity) async throws {
        try await transaction { connection in
            let inserted = try await connection.query(
                """
                INSERT INTO activities (id, app_id, event_id, environment, activity_id, channel_id, \
                push_to_start_token_id,
                                        state, last_timestamp_sent, frequent_pushes_enabled, created_at, updated_at)
                SELECT \(activity.id.uuid), e.app_id, e.id, \(activity.environment.rawValue), \(activity.activityID),
                       \(activity.channelID?.uuid), \(activity.pushToStartTokenRowID), \(activity.state.rawValue),
                       \(activity.lastTimestampSent), \(activity.frequentPushesEnabled), \(activity.createdAt), \
                \(activity.updatedAt)
                FROM events e WHERE e.app_id = \(activity.appID.uuid) AND e.id = \(activity.eventID.uuid)
                RETURNING id
                """,
                logger: logger
            ).collect()
            guard !inserted.isEmpty else {
                throw StoreError.notFound(entity: "event", id: activity.eventID.description)
            }
            for record in activity.updateTokens {
                try await connection.query(
                    """
                    INSERT INTO activity_update_tokens (activity_id, token, received_at, retired_at)
                    VALUES (\(activity.id.uuid), \(record.token), \(record.receivedAt), \(record.retiredAt))
                    """,
                    logger: logger
                )
            }
        }
    }

    public func activity(appID: AppID, id: ActivityRecordID) async throws -> Activity? {
        try await loadActivity(
            """
            SELECT \(unescaped: RowMapping.activityColumns) FROM activities WHERE app_id = \(appID.uuid) AND id = \
            \(id.uuid)
            """
        )
    }

    public func activity(appID: AppID, activityID: String) async throws -> Activity? {
        try await loadActivity(
            """
            SELECT \(unescaped: RowMapping.activityColumns) FROM activities
            WHERE app_id = \(appID.uuid) AND activity_id = \(activityID)
            """
        )
    }

    private func loadActivity(_ query: PostgresQuery) async throws -> Activity? {
        guard let row = try await firstRow(query) else { return nil }
        let id = try PostgresColumns(row, entity: "activity").uuid("id")
        let tokens = try await rows(
            """
            SELECT \(unescaped: RowMapping.updateTokenColumns) FROM activity_update_tokens
            WHERE activity_id = \(id) ORDER BY received_at, token
            """
        ).mapped(RowMapping.updateToken)
        return try RowMapping.activity(PostgresColumns(row, entity: "activity"), updateTokens: tokens)
    }

    public func recordUpdateToken(
        appID: AppID,
        id: ActivityRecordID,
        activityID: String,
        token: String,
        frequentPushesEnabled: Bool,
        at: Date
    ) async throws -> Activity {
        try await transaction { connection in
            // Locks the activity so that two reports of rotated tokens apply one after the other.
            let locked = try await connection.query(
                """
                UPDATE activities
                SET activity_id = \(activityID), frequent_pushes_enabled = \(frequentPushesEnabled), updated_at = \(at),
                    state = CASE WHEN state = 'starting' THEN 'active' ELSE state END
                WHERE app_id = \(appID.uuid) AND id = \(id.uuid)
                RETURNING id
                """,
                logger: logger
            ).collect()
            guard !locked.isEmpty else { throw StoreError.notFound(entity: "activity", id: id.description) }
            try await connection.query(
                """
                UPDATE activity_update_tokens SET retired_at = \(at)
                WHERE activity_id = \(id.uuid) AND retired_at IS NULL AND token <> \(token)
                """,
                logger: logger
            )
            try await connection.query(
                """
                INSERT INTO activity_update_tokens (activity_id, token, received_at)
                VALUES (\(id.uuid), \(token), \(at))
                ON CONFLICT (activity_id, token) DO NOTHING
                """,
                logger: logger
            )
        }
        return try await reloaded(appID: appID, id: id)
    }

    public func setActivityState(
        appID: AppID,
        id: ActivityRecordID,
        state: ActivityState,
        at: Date
    ) async throws -> Bool {
        try await !rows(
            """
            UPDATE activities SET state = \(state.rawValue), updated_at = \(at)
            WHERE app_id = \(appID.uuid) AND id = \(id.uuid) RETURNING id
            """
        ).isEmpty
    }

    public func nextActivityTimestamp(appID: AppID, id: ActivityRecordID, now: Int64) async throws -> Int64 {
        let updated = try await firstRow(
            """
            UPDATE activities
            SET last_timestamp_sent = GREATEST(\(now), COALESCE(last_timestamp_sent + 1, \(now)))
            WHERE app_id = \(appID.uuid) AND id = \(id.uuid)
            RETURNING last_timestamp_sent
            """
        )
        guard let updated else { throw StoreError.notFound(entity: "activity", id: id.description) }
        return try updated.decode(Int64.self)
    }
}
