import Foundation
import MarqueeCore
import PostgresNIO

extension PostgresStore {
    public func createEvent(_ event: Event) async throws -> (event: Event, created: Bool) {
        let inserted = try await firstRow(
            """
            INSERT INTO events (id, app_id, external_key, title, attributes_type, environments, storage_policy,
                                priority_policy, planned_start, planned_end, timeline, late_joiners, state, \
            created_at, updated_at)
            SELECT \(event.id.uuid), a.id, \(event.externalKey), \(event.title), \(event.attributesType),
                   \(ColumnCoding.environments(event.environments)), \(event.storagePolicy.rawValue),
                   \(event.priorityPolicy?.rawValue),
                   \(event.plannedStart), \(event.plannedEnd), \
            \(event.timeline.map { ColumnCoding.json($0.jsonValue) })::json,
                   \(event.lateJoiners), \(event.state.rawValue), \(event.createdAt), \(event.updatedAt)
            FROM apps a WHERE a.id = \(event.appID.uuid)
            ON CONFLICT (app_id, external_key) DO NOTHING
            RETURNING \(unescaped: RowMapping.eventColumns)
            """
        )
        if let inserted { return (try RowMapping.event(PostgresColumns(inserted, entity: "event")), true) }
        if let existing = try await self.event(appID: event.appID, externalKey: event.externalKey) {
            return (existing, false)
        }
        throw StoreError.notFound(entity: "app", id: event.appID.description)
    }

    public func event(appID: AppID, id: EventID) async throws -> Event? {
        try await firstRow(
            "SELECT \(unescaped: RowMapping.eventColumns) FROM events WHERE app_id = \(appID.uuid) AND id = \(id.uuid)"
        ).mapped(RowMapping.event)
    }

    public func event(appID: AppID, externalKey: String) async throws -> Event? {
        try await firstRow(
            """
            SELECT \(unescaped: RowMapping.eventColumns) FROM events
            WHERE app_id = \(appID.uuid) AND external_key = \(externalKey)
            """
        ).mapped(RowMapping.event)
    }

    public func broadcastTarget(appID: AppID, externalKey: String) async throws -> BroadcastTarget? {
        // Each EXISTS is one probe of the partial index activities_update_audience.
        try await firstRow(
            """
            SELECT \(unescaped: RowMapping.broadcastTargetColumns) FROM events
            WHERE app_id = \(appID.uuid) AND external_key = \(externalKey)
            """
        ).mapped(RowMapping.broadcastTarget)
    }

    public func beginBroadcast(
        appID: AppID,
        externalKey: String,
        environments: Set<APNSEnvironment>,
        now: Int64,
        budgetSince: Date
    ) async throws -> BroadcastTarget? {
        let rows = try await rows(
            PreparedQuery<BeginBroadcastShape>(
                Self.beginBroadcast(
                    appID: appID,
                    externalKey: externalKey,
                    environments: environments,
                    now: now,
                    budgetSince: budgetSince
                )
            )
        )
        return try RowMapping.beganBroadcast(rows.map { PostgresColumns($0, entity: "event") })
    }

    /// One statement, one round trip before the send: the event as broadcastTarget reads it, the
    /// timestamps taken on its active channels as takeBroadcastTimestamp takes them (the row lock
    /// orders concurrent broadcasts) and each channel's budget use as broadcastCount counts it (the
    /// partial index broadcast_log_budget, whose predicate's constants are literals here). An event
    /// that is neither scheduled nor live gets no timestamp: the broadcast is refused. Prepared
    /// (`BeginBroadcastShape`).
    static func beginBroadcast(
        appID: AppID,
        externalKey: String,
        environments: Set<APNSEnvironment>,
        now: Int64,
        budgetSince: Date
    ) -> PostgresQuery {
        """
        WITH target AS (
            SELECT \(unescaped: RowMapping.broadcastTargetColumns) FROM events
            WHERE app_id = \(appID.uuid) AND external_key = \(externalKey)::text
        ), taken AS (
            UPDATE channels c
            SET last_broadcast_timestamp = GREATEST(\(now)::bigint, COALESCE(c.last_broadcast_timestamp + 1, \(now)::bigint))
            FROM target t
            WHERE c.app_id = \(appID.uuid) AND c.event_id = t.id AND c.state = 'active'
              AND t.state IN ('scheduled', 'live') AND c.environment = ANY(\(environments.map(\.rawValue).sorted())::text[])
            RETURNING \(unescaped: RowMapping.takenChannelColumns(of: "c"))
        )
        SELECT target.*, taken.*,
               (SELECT count(*) FROM broadcast_log b
                WHERE b.app_id = \(appID.uuid) AND b.channel_id = taken.channel_id
                  AND b.priority = \(unescaped: String(APNSPriority.immediate.rawValue)) AND b.status = 200
                  AND b.sent_at >= \(budgetSince)::timestamptz) AS immediate_sent
        FROM target LEFT JOIN taken ON true
        """
    }

    public func setEventState(appID: AppID, id: EventID, state: EventState, at: Date) async throws -> Bool {
        let changed = try await !rows(
            """
            UPDATE events SET state = \(state.rawValue), updated_at = \(at)
            WHERE app_id = \(appID.uuid) AND id = \(id.uuid) RETURNING id, \(unescaped: Self.notifyEventChannelAnswer)
            """
        ).isEmpty
        if changed { announceChannelAnswer(of: id) }
        return changed
    }

    public func updateEvent(_ event: Event) async throws -> Event {
        // An edit read before a start's first accepted device cannot take the event back from live.
        let updated = try await firstRow(
            """
            UPDATE events SET title = \(event.title), environments = \(ColumnCoding.environments(event.environments)),
                              priority_policy = \(event.priorityPolicy?.rawValue),
                              planned_start = \(event.plannedStart), planned_end = \(event.plannedEnd),
                              timeline = \(event.timeline.map { ColumnCoding.json($0.jsonValue) })::json,
                              late_joiners = \(event.lateJoiners),
                              state = CASE WHEN state = 'live' AND \(event.state.rawValue)::text = 'scheduled' THEN \
            state
                                           ELSE \(event.state.rawValue)::text END,
                              updated_at = \(event.updatedAt)
            WHERE app_id = \(event.appID.uuid) AND id = \(event.id.uuid)
            RETURNING \(unescaped: RowMapping.eventColumns), \(unescaped: Self.notifyEventChannelAnswer)
            """
        )
        guard let updated else { throw StoreError.notFound(entity: "event", id: event.id.description) }
        announceChannelAnswer(of: event.id)
        return try RowMapping.event(PostgresColumns(updated, entity: "event"))
    }

    public func events(appID: AppID, states: Set<EventState>?, afterKey: String?, limit: Int) async throws -> [Event] {
        if let states, states.isEmpty { return [] }
        guard limit > 0 else { return [] }
        // Keyset order in the database's collation, the one the UNIQUE (app_id, external_key)
        // index is built with, so that index serves both the order and the `>` cursor. Optional
        // filters are `param IS NULL OR ...`, as in audiencePage.
        let names = states.map { $0.map(\.rawValue).sorted() }
        return try await rows(
            """
            SELECT \(unescaped: RowMapping.eventColumns) FROM events
            WHERE app_id = \(appID.uuid)
              AND (\(afterKey)::text IS NULL OR external_key > \(afterKey)::text)
              AND (\(names)::text[] IS NULL OR state = ANY(\(names)::text[]))
            ORDER BY external_key
            LIMIT \(limit)
            """
        ).mapped(RowMapping.event)
    }

    public func eventCounts(appID: AppID) async throws -> [EventState: Int64] {
        var counts: [EventState: Int64] = [:]
        for row in try await rows("SELECT state, count(*) FROM events WHERE app_id = \(appID.uuid) GROUP BY state") {
            let (name, count) = try row.decode((String, Int64).self)
            guard let state = EventState(rawValue: name) else {
                throw StoreError.corruptRow(entity: "event", detail: "unknown state \(name)")
            }
            counts[state] = count
        }
        return counts
    }

    public func deleteEvent(appID: AppID, id: EventID) async throws -> Bool {
        // Channels and activities (with their update tokens) go with the event through their
        // ON DELETE CASCADE foreign keys. The start ledger has none (migration 0009): its entries
        // are deleted by the next statement, whose snapshot is taken after the event's delete has
        // waited for every batch holding the event (FOR KEY SHARE), so it sees all they wrote.
        let deleted = try await transaction { connection in
            let deleted = try await connection.query(
                """
                DELETE FROM events WHERE app_id = \(appID.uuid) AND id = \(id.uuid) RETURNING id, \
                \(unescaped: Self.notifyEventChannelAnswer)
                """,
                logger: logger
            ).collect()
            guard !deleted.isEmpty else { return false }
            try await connection.query("DELETE FROM start_ledger WHERE event_id = \(id.uuid)", logger: logger)
            return true
        }
        if deleted { announceChannelAnswer(of: id) }
        return deleted
    }
}
