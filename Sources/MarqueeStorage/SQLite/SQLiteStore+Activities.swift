import Foundation
import MarqueeCore
import SQLiteNIO

extension SQLiteStore {
    public func recordActivity(_ activity: Activity) async throws {
        try await write { connection in
            let inserted = try await connection.query(
                """
                INSERT INTO activities (id, app_id, event_id, environment, activity_id, channel_id, \
                push_to_start_token_id,
                                        state, last_timestamp_sent, frequent_pushes_enabled, created_at, updated_at)
                SELECT ?, e.app_id, e.id, ?, ?, ?, ?, ?, ?, ?, ?, ? FROM events e WHERE e.app_id = ? AND e.id = ?
                RETURNING id
                """,
                [
                    .id(activity.id), .text(activity.environment.rawValue), .text(activity.activityID),
                    .id(activity.channelID), .int(activity.pushToStartTokenRowID), .text(activity.state.rawValue),
                    .int(activity.lastTimestampSent), .bool(activity.frequentPushesEnabled), .date(activity.createdAt),
                    .date(activity.updatedAt),
                    .id(activity.appID), .id(activity.eventID),
                ]
            )
            guard !inserted.isEmpty else {
                throw StoreError.notFound(entity: "event", id: activity.eventID.description)
            }
            for record in activity.updateTokens {
                _ = try await connection.query(
                    """
                    INSERT INTO activity_update_tokens (activity_id, token, received_at, retired_at) VALUES (?, ?,\
                     ?, ?)
                    """,
                    [.id(activity.id), .text(record.token), .date(record.receivedAt), .date(record.retiredAt)]
                )
            }
        }
    }

    public func activity(appID: AppID, id: ActivityRecordID) async throws -> Activity? {
        try await loadActivity(
            "SELECT \(RowMapping.activityColumns) FROM activities WHERE app_id = ? AND id = ?",
            [.id(appID), .id(id)]
        )
    }

    public func activity(appID: AppID, activityID: String) async throws -> Activity? {
        try await loadActivity(
            "SELECT \(RowMapping.activityColumns) FROM activities WHERE app_id = ? AND activity_id = ?",
            [.id(appID), .text(activityID)]
        )
    }

    private func loadActivity(_ sql: String, _ binds: [SQLiteData]) async throws -> Activity? {
        try await access.withAccess {
            guard let row = try await connection.query(sql, binds).first else { return nil }
            let id = try SQLiteColumns(row, entity: "activity").uuid("id")
            let tokens = try await connection.query(
                """
                SELECT \(RowMapping.updateTokenColumns) FROM activity_update_tokens WHERE activity_id = ? ORDER \
                BY received_at, token
                """,
                [.uuid(id)]
            ).mapped(RowMapping.updateToken)
            return try RowMapping.activity(SQLiteColumns(row, entity: "activity"), updateTokens: tokens)
        }
    }

    public func recordUpdateToken(
        appID: AppID,
        id: ActivityRecordID,
        activityID: String,
        token: String,
        frequentPushesEnabled: Bool,
        at: Date
    ) async throws -> Activity {
        try await write { connection in
            let updated = try await connection.query(
                """
                UPDATE activities
                SET activity_id = ?, frequent_pushes_enabled = ?, updated_at = ?,
                    state = CASE WHEN state = 'starting' THEN 'active' ELSE state END
                WHERE app_id = ? AND id = ? RETURNING id
                """,
                [.text(activityID), .bool(frequentPushesEnabled), .date(at), .id(appID), .id(id)]
            )
            guard !updated.isEmpty else { throw StoreError.notFound(entity: "activity", id: id.description) }
            _ = try await connection.query(
                """
                UPDATE activity_update_tokens SET retired_at = ? WHERE activity_id = ? AND retired_at IS NULL AND \
                token <> ?
                """,
                [.date(at), .id(id), .text(token)]
            )
            _ = try await connection.query(
                """
                INSERT INTO activity_update_tokens (activity_id, token, received_at) VALUES (?, ?, ?)
                ON CONFLICT (activity_id, token) DO NOTHING
                """,
                [.id(id), .text(token), .date(at)]
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
        try await !query(
            "UPDATE activities SET state = ?, updated_at = ? WHERE app_id = ? AND id = ? RETURNING id",
            [.text(state.rawValue), .date(at), .id(appID), .id(id)]
        ).isEmpty
    }

    public func nextActivityTimestamp(appID: AppID, id: ActivityRecordID, now: Int64) async throws -> Int64 {
        let updated = try await query(
            """
            UPDATE activities SET last_timestamp_sent = MAX(?1, COALESCE(last_timestamp_sent + 1, ?1))
            WHERE app_id = ?2 AND id = ?3
            RETURNING last_timestamp_sent
            """,
            [.int(now), .id(appID), .id(id)]
        )
        guard let row = updated.first else { throw StoreError.notFound(entity: "activity", id: id.description) }
        return try SQLiteColumns(row, entity: "activity").int64("last_timestamp_sent")
    }
}
