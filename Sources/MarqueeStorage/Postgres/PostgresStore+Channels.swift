import Foundation
import MarqueeCore
import PostgresNIO

extension PostgresStore {
    public func reserveChannel(
        appID: AppID,
        eventID: EventID,
        environment: APNSEnvironment,
        storagePolicy: MessageStoragePolicy,
        requestID: UUID,
        at: Date
    ) async throws -> ChannelReservation {
        // A racing insert waits for the winner's commit and then does nothing; the live row is read
        // back in a fresh snapshot. The loop covers the rare case of that row leaving the live
        // states in between.
        for _ in 0..<3 {
            let inserted = try await firstRow(
                """
                INSERT INTO channels (id, app_id, event_id, environment, storage_policy, state, create_request_id,
                                      created_at, updated_at)
                SELECT \(UUID.random()), e.app_id, e.id, \(environment.rawValue), \(storagePolicy.rawValue), 'creating',
                       \(requestID), \(at), \(at)
                FROM events e WHERE e.app_id = \(appID.uuid) AND e.id = \(eventID.uuid)
                ON CONFLICT (event_id, environment) WHERE state IN ('creating', 'active', 'deleting') DO NOTHING
                RETURNING \(unescaped: RowMapping.channelColumns)
                """
            )
            if let inserted { return .reserved(try RowMapping.channel(PostgresColumns(inserted, entity: "channel"))) }
            if let existing = try await liveChannel(appID: appID, eventID: eventID, environment: environment) {
                return .existing(existing)
            }
            guard try await event(appID: appID, id: eventID) != nil else {
                throw StoreError.notFound(entity: "event", id: eventID.description)
            }
        }
        throw StoreError.duplicate(entity: "channel", key: "\(eventID)/\(environment)")
    }

    public func activateChannel(
        appID: AppID,
        id: ChannelID,
        apnsChannelID: String,
        at: Date
    ) async throws -> BroadcastChannel {
        // A reconciliation may have recorded this APNs ID as an orphan between APNs' answer and
        // this commit; the orphan row is deleted in the same transaction, so the unique index on
        // the APNs ID sees one row. An orphan recorded by a reconciliation committing between the
        // two statements makes the update fail on that index: the loop tries again, finding it.
        for attempt in 1...3 {
            do {
                let updated = try await transaction { connection in
                    try await connection.query(
                        """
                        DELETE FROM channels o USING channels c
                        WHERE c.app_id = \(appID.uuid) AND c.id = \(id.uuid) AND c.state = 'creating'
                          AND o.app_id = c.app_id AND o.environment = c.environment
                          AND o.apns_channel_id = \(apnsChannelID) AND o.state = 'orphaned'
                        """,
                        logger: logger
                    )
                    return try await connection.query(
                        """
                        UPDATE channels SET state = 'active', apns_channel_id = \(apnsChannelID), updated_at = \(at)
                        WHERE app_id = \(appID.uuid) AND id = \(id.uuid) AND state = 'creating'
                        RETURNING \(unescaped: RowMapping.channelColumns), \(unescaped: Self.notifyChannelAnswer)
                        """,
                        logger: logger
                    ).collect().first
                }
                if let updated { return try announced(RowMapping.channel(PostgresColumns(updated, entity: "channel"))) }
                throw try await transitionRefusal(appID: appID, id: id, to: .active)
            } catch let error as PSQLError where error.isUniqueViolation {
                // Another live row (not an orphan) holds the APNs ID: refused as a duplicate.
                let orphanCommittedMeanwhile = try await orphanHolds(
                    appID: appID,
                    channelID: id,
                    apnsChannelID: apnsChannelID
                )
                if attempt == 3 || !orphanCommittedMeanwhile {
                    throw StoreError.duplicate(entity: "channel", key: apnsChannelID)
                }
            }
        }
        throw StoreError.duplicate(entity: "channel", key: apnsChannelID)
    }

    /// Whether an `orphaned` row in the channel's environment holds the APNs ID.
    private func orphanHolds(appID: AppID, channelID: ChannelID, apnsChannelID: String) async throws -> Bool {
        try await !rows(
            """
            SELECT 1 FROM channels o JOIN channels c ON o.app_id = c.app_id AND o.environment = c.environment
            WHERE c.app_id = \(appID.uuid) AND c.id = \(channelID.uuid)
              AND o.apns_channel_id = \(apnsChannelID) AND o.state = 'orphaned'
            """
        ).isEmpty
    }

    public func transitionChannel(
        appID: AppID,
        id: ChannelID,
        to state: ChannelState,
        at: Date
    ) async throws -> BroadcastChannel {
        let updated = try await firstRow(
            """
            UPDATE channels SET state = \(state.rawValue), updated_at = \(at)
            WHERE app_id = \(appID.uuid) AND id = \(id.uuid)
              AND state = ANY(\(ColumnCoding.channelStates(allowingTransitionTo: state)))
            RETURNING \(unescaped: RowMapping.channelColumns), \(unescaped: Self.notifyChannelAnswer)
            """
        )
        if let updated { return try announced(RowMapping.channel(PostgresColumns(updated, entity: "channel"))) }
        throw try await transitionRefusal(appID: appID, id: id, to: state)
    }

    public func recordOrphanedChannel(
        appID: AppID,
        environment: APNSEnvironment,
        apnsChannelID: String,
        storagePolicy: MessageStoragePolicy,
        at: Date
    ) async throws -> BroadcastChannel {
        let inserted = try await firstRow(
            """
            INSERT INTO channels (id, app_id, event_id, environment, apns_channel_id, storage_policy, state,
                                  create_request_id, created_at, updated_at)
            SELECT \(UUID.random()), a.id, NULL, \(environment.rawValue), \(apnsChannelID), \(storagePolicy.rawValue), \
            'orphaned',
                   \(UUID.random()), \(at), \(at)
            FROM apps a WHERE a.id = \(appID.uuid)
            ON CONFLICT (app_id, environment, apns_channel_id) WHERE apns_channel_id IS NOT NULL DO NOTHING
            RETURNING \(unescaped: RowMapping.channelColumns)
            """
        )
        if let inserted { return try RowMapping.channel(PostgresColumns(inserted, entity: "channel")) }
        let existing = try await firstRow(
            """
            SELECT \(unescaped: RowMapping.channelColumns) FROM channels
            WHERE app_id = \(appID.uuid) AND environment = \(environment.rawValue) AND apns_channel_id = \
            \(apnsChannelID)
            """
        )
        guard let existing else { throw StoreError.notFound(entity: "app", id: appID.description) }
        return try RowMapping.channel(PostgresColumns(existing, entity: "channel"))
    }

    public func channel(appID: AppID, id: ChannelID) async throws -> BroadcastChannel? {
        try await firstRow(
            """
            SELECT \(unescaped: RowMapping.channelColumns) FROM channels WHERE app_id = \(appID.uuid) AND id = \
            \(id.uuid)
            """
        ).mapped(RowMapping.channel)
    }

    public func liveChannel(
        appID: AppID,
        eventID: EventID,
        environment: APNSEnvironment
    ) async throws -> BroadcastChannel? {
        try await firstRow(
            """
            SELECT \(unescaped: RowMapping.channelColumns) FROM channels
            WHERE app_id = \(appID.uuid) AND event_id = \(eventID.uuid) AND environment = \(environment.rawValue)
              AND state IN ('creating', 'active', 'deleting')
            """
        ).mapped(RowMapping.channel)
    }

    public func channels(
        appID: AppID,
        environment: APNSEnvironment,
        states: Set<ChannelState>
    ) async throws -> [BroadcastChannel] {
        try await rows(
            """
            SELECT \(unescaped: RowMapping.channelColumns) FROM channels
            WHERE app_id = \(appID.uuid) AND environment = \(environment.rawValue) AND state = \
            ANY(\(states.map(\.rawValue)))
            ORDER BY created_at, id
            """
        ).mapped(RowMapping.channel)
    }

    public func channels(appID: AppID, eventID: EventID) async throws -> [BroadcastChannel] {
        try await rows(
            """
            SELECT \(unescaped: RowMapping.channelColumns) FROM channels
            WHERE app_id = \(appID.uuid) AND event_id = \(eventID.uuid)
            ORDER BY created_at, id
            """
        ).mapped(RowMapping.channel)
    }

    public func channelCount(appID: AppID, environment: APNSEnvironment, states: Set<ChannelState>) async throws -> Int
    {
        let row = try await firstRow(
            """
            SELECT count(*) FROM channels
            WHERE app_id = \(appID.uuid) AND environment = \(environment.rawValue) AND state = \
            ANY(\(states.map(\.rawValue)))
            """
        )
        return try row?.decode(Int.self) ?? 0
    }

    public func nextBroadcastTimestamp(appID: AppID, channelID: ChannelID, now: Int64) async throws -> Int64 {
        // MonotonicTimestamp.next in one statement: the row lock orders concurrent callers.
        let updated = try await firstRow(
            """
            UPDATE channels
            SET last_broadcast_timestamp = GREATEST(\(now), COALESCE(last_broadcast_timestamp + 1, \(now)))
            WHERE app_id = \(appID.uuid) AND id = \(channelID.uuid) AND state = 'active'
            RETURNING last_broadcast_timestamp
            """
        )
        if let updated { return try updated.decode(Int64.self) }
        throw try await broadcastRefusal(appID: appID, id: channelID)
    }

    public func takeBroadcastTimestamp(
        appID: AppID,
        eventID: EventID,
        environment: APNSEnvironment,
        now: Int64
    ) async throws -> BroadcastChannel? {
        // One live channel per event and environment (the unique index), so at most one row.
        try await firstRow(
            """
            UPDATE channels
            SET last_broadcast_timestamp = GREATEST(\(now), COALESCE(last_broadcast_timestamp + 1, \(now)))
            WHERE app_id = \(appID.uuid) AND event_id = \(eventID.uuid) AND environment = \(environment.rawValue) AND \
            state = 'active'
            RETURNING \(unescaped: RowMapping.channelColumns)
            """
        ).mapped(RowMapping.channel)
    }
}

extension PostgresStore {
    public func channelPage(
        appID: AppID,
        environments: Set<APNSEnvironment>,
        states: Set<ChannelState>,
        after: ChannelListPosition?,
        limit: Int
    ) async throws -> [ListedChannel] {
        try await rows(
            """
            SELECT \(unescaped: RowMapping.channelColumns(of: "c")), e.external_key AS event_key
            FROM channels c LEFT JOIN events e ON e.app_id = c.app_id AND e.id = c.event_id
            WHERE c.app_id = \(appID.uuid) AND c.environment = ANY(\(environments.map(\.rawValue)))
              AND c.state = ANY(\(states.map(\.rawValue)))
              AND (\(after == nil) OR (c.created_at, c.id) > (\(exactTime: after?.createdAt), \
            \(after?.id.uuid ?? UUID.random())::uuid))
            ORDER BY c.created_at, c.id
            LIMIT \(max(1, limit))
            """
        ).mapped(RowMapping.listedChannel)
    }
}
