import Foundation
import MarqueeCore
import SQLiteNIO

extension SQLiteStore {
    public func reserveChannel(
        appID: AppID,
        eventID: EventID,
        environment: APNSEnvironment,
        storagePolicy: MessageStoragePolicy,
        requestID: UUID,
        at: Date
    ) async throws -> ChannelReservation {
        try await write { connection in
            let inserted = try await connection.query(
                """
                INSERT INTO channels (id, app_id, event_id, environment, storage_policy, state, create_request_id,
                                      created_at, updated_at)
                SELECT ?, e.app_id, e.id, ?, ?, 'creating', ?, ?, ? FROM events e WHERE e.app_id = ? AND e.id = ?
                ON CONFLICT (event_id, environment) WHERE state IN ('creating', 'active', 'deleting') DO NOTHING
                RETURNING \(RowMapping.channelColumns)
                """,
                [
                    .uuid(UUID.random()), .text(environment.rawValue), .int(storagePolicy.rawValue), .uuid(requestID),
                    .date(at),
                    .date(at), .id(appID), .id(eventID),
                ]
            )
            if let row = inserted.first {
                return .reserved(try RowMapping.channel(SQLiteColumns(row, entity: "channel")))
            }
            if let row = try await connection.query(
                Self.liveChannelSQL,
                [.id(appID), .id(eventID), .text(environment.rawValue)]
            ).first {
                return .existing(try RowMapping.channel(SQLiteColumns(row, entity: "channel")))
            }
            throw StoreError.notFound(entity: "event", id: eventID.description)
        }
    }

    static let liveChannelSQL = """
        SELECT \(RowMapping.channelColumns) FROM channels
        WHERE app_id = ? AND event_id = ? AND environment = ? AND state IN ('creating', 'active', 'deleting')
        """

    public func activateChannel(
        appID: AppID,
        id: ChannelID,
        apnsChannelID: String,
        at: Date
    ) async throws -> BroadcastChannel {
        // A reconciliation may have recorded this APNs ID as an orphan between APNs' answer and
        // this commit; the orphan row is deleted in the same transaction, so the unique index on
        // the APNs ID sees one row.
        let updated: SQLiteRow?
        do {
            updated = try await write { connection in
                _ = try await connection.query(
                    """
                    DELETE FROM channels
                    WHERE app_id = ?1 AND apns_channel_id = ?2 AND state = 'orphaned'
                      AND environment = (SELECT c.environment FROM channels c
                                         WHERE c.app_id = ?1 AND c.id = ?3 AND c.state = 'creating')
                    """,
                    [.id(appID), .text(apnsChannelID), .id(id)]
                )
                return try await connection.query(
                    """
                    UPDATE channels SET state = 'active', apns_channel_id = ?, updated_at = ?
                    WHERE app_id = ? AND id = ? AND state = 'creating'
                    RETURNING \(RowMapping.channelColumns)
                    """,
                    [.text(apnsChannelID), .date(at), .id(appID), .id(id)]
                ).first
            }
        } catch let error as SQLiteError where error.isUniqueViolation {
            // Another row that is not an orphan holds the APNs ID.
            throw StoreError.duplicate(entity: "channel", key: apnsChannelID)
        }
        if let updated { return try announced(RowMapping.channel(SQLiteColumns(updated, entity: "channel"))) }
        throw try await transitionRefusal(appID: appID, id: id, to: .active)
    }

    public func transitionChannel(
        appID: AppID,
        id: ChannelID,
        to state: ChannelState,
        at: Date
    ) async throws -> BroadcastChannel {
        let allowed = ColumnCoding.channelStates(allowingTransitionTo: state)
        let placeholders = Self.placeholders(allowed.count)
        let updated = try await query(
            """
            UPDATE channels SET state = ?, updated_at = ?
            WHERE app_id = ? AND id = ? AND state IN (\(placeholders.isEmpty ? "NULL" : placeholders))
            RETURNING \(RowMapping.channelColumns)
            """,
            [.text(state.rawValue), .date(at), .id(appID), .id(id)] + allowed.map { .text($0) }
        )
        if let row = updated.first { return try announced(RowMapping.channel(SQLiteColumns(row, entity: "channel"))) }
        throw try await transitionRefusal(appID: appID, id: id, to: state)
    }

    public func recordOrphanedChannel(
        appID: AppID,
        environment: APNSEnvironment,
        apnsChannelID: String,
        storagePolicy: MessageStoragePolicy,
        at: Date
    ) async throws -> BroadcastChannel {
        try await write { connection in
            let inserted = try await connection.query(
                """
                INSERT INTO channels (id, app_id, event_id, environment, apns_channel_id, storage_policy, state,
                                      create_request_id, created_at, updated_at)
                SELECT ?, a.id, NULL, ?, ?, ?, 'orphaned', ?, ?, ? FROM apps a WHERE a.id = ?
                ON CONFLICT (app_id, environment, apns_channel_id) WHERE apns_channel_id IS NOT NULL DO NOTHING
                RETURNING \(RowMapping.channelColumns)
                """,
                [
                    .uuid(UUID.random()), .text(environment.rawValue), .text(apnsChannelID),
                    .int(storagePolicy.rawValue),
                    .uuid(UUID.random()), .date(at), .date(at), .id(appID),
                ]
            )
            if let row = inserted.first { return try RowMapping.channel(SQLiteColumns(row, entity: "channel")) }
            guard
                let row = try await connection.query(
                    """
                    SELECT \(RowMapping.channelColumns) FROM channels
                    WHERE app_id = ? AND environment = ? AND apns_channel_id = ?
                    """,
                    [.id(appID), .text(environment.rawValue), .text(apnsChannelID)]
                ).first
            else { throw StoreError.notFound(entity: "app", id: appID.description) }
            return try RowMapping.channel(SQLiteColumns(row, entity: "channel"))
        }
    }

    public func channel(appID: AppID, id: ChannelID) async throws -> BroadcastChannel? {
        try await query(
            "SELECT \(RowMapping.channelColumns) FROM channels WHERE app_id = ? AND id = ?",
            [.id(appID), .id(id)]
        )
        .first.mapped(RowMapping.channel)
    }

    public func liveChannel(
        appID: AppID,
        eventID: EventID,
        environment: APNSEnvironment
    ) async throws -> BroadcastChannel? {
        try await query(Self.liveChannelSQL, [.id(appID), .id(eventID), .text(environment.rawValue)])
            .first.mapped(RowMapping.channel)
    }

    public func channels(
        appID: AppID,
        environment: APNSEnvironment,
        states: Set<ChannelState>
    ) async throws -> [BroadcastChannel] {
        guard !states.isEmpty else { return [] }
        let names = states.map(\.rawValue).sorted()
        return try await query(
            """
            SELECT \(RowMapping.channelColumns) FROM channels
            WHERE app_id = ? AND environment = ? AND state IN (\(Self.placeholders(names.count)))
            ORDER BY created_at, id
            """,
            [.id(appID), .text(environment.rawValue)] + names.map { .text($0) }
        ).mapped(RowMapping.channel)
    }

    public func channels(appID: AppID, eventID: EventID) async throws -> [BroadcastChannel] {
        try await query(
            """
            SELECT \(RowMapping.channelColumns) FROM channels WHERE app_id = ? AND event_id = ? ORDER BY \
            created_at, id
            """,
            [.id(appID), .id(eventID)]
        ).mapped(RowMapping.channel)
    }

    public func channelCount(appID: AppID, environment: APNSEnvironment, states: Set<ChannelState>) async throws -> Int
    {
        guard !states.isEmpty else { return 0 }
        let names = states.map(\.rawValue).sorted()
        let rows = try await query(
            """
            SELECT count(*) AS n FROM channels
            WHERE app_id = ? AND environment = ? AND state IN (\(Self.placeholders(names.count)))
            """,
            [.id(appID), .text(environment.rawValue)] + names.map { .text($0) }
        )
        return try rows.first.map { try SQLiteColumns($0, entity: "channel").int("n") } ?? 0
    }

    public func nextBroadcastTimestamp(appID: AppID, channelID: ChannelID, now: Int64) async throws -> Int64 {
        // MonotonicTimestamp.next in one statement.
        let updated = try await query(
            """
            UPDATE channels SET last_broadcast_timestamp = MAX(?1, COALESCE(last_broadcast_timestamp + 1, ?1))
            WHERE app_id = ?2 AND id = ?3 AND state = 'active'
            RETURNING last_broadcast_timestamp
            """,
            [.int(now), .id(appID), .id(channelID)]
        )
        if let row = updated.first {
            return try SQLiteColumns(row, entity: "channel").int64("last_broadcast_timestamp")
        }
        throw try await broadcastRefusal(appID: appID, id: channelID)
    }

    public func takeBroadcastTimestamp(
        appID: AppID,
        eventID: EventID,
        environment: APNSEnvironment,
        now: Int64
    ) async throws -> BroadcastChannel? {
        try await query(
            Self.takeBroadcastTimestampSQL,
            [.int(now), .id(appID), .id(eventID), .text(environment.rawValue)]
        )
        .first.mapped(RowMapping.channel)
    }

    /// `MonotonicTimestamp.next` on the event's active channel in the environment (binds: now,
    /// app, event, environment).
    static let takeBroadcastTimestampSQL = """
        UPDATE channels SET last_broadcast_timestamp = MAX(?1, COALESCE(last_broadcast_timestamp + 1, ?1))
        WHERE app_id = ?2 AND event_id = ?3 AND environment = ?4 AND state = 'active'
        RETURNING \(RowMapping.channelColumns)
        """
}

extension SQLiteStore {
    public func channelPage(
        appID: AppID,
        environments: Set<APNSEnvironment>,
        states: Set<ChannelState>,
        after: ChannelListPosition?,
        limit: Int
    ) async throws -> [ListedChannel] {
        guard !environments.isEmpty, !states.isEmpty else { return [] }
        let environmentNames = environments.map(\.rawValue).sorted()
        let stateNames = states.map(\.rawValue).sorted()
        var sql = """
            SELECT \(RowMapping.channelColumns(of: "c")), e.external_key AS event_key
            FROM channels c LEFT JOIN events e ON e.app_id = c.app_id AND e.id = c.event_id
            WHERE c.app_id = ? AND c.environment IN (\(Self.placeholders(environmentNames.count)))
              AND c.state IN (\(Self.placeholders(stateNames.count)))
            """
        var binds: [SQLiteData] = [.id(appID)] + environmentNames.map { .text($0) } + stateNames.map { .text($0) }
        if let after {
            sql += " AND (c.created_at > ? OR (c.created_at = ? AND c.id > ?))"
            binds += [.date(after.createdAt), .date(after.createdAt), .id(after.id)]
        }
        sql += " ORDER BY c.created_at, c.id LIMIT ?"
        binds.append(.int(max(1, limit)))
        return try await query(sql, binds).mapped(RowMapping.listedChannel)
    }
}
