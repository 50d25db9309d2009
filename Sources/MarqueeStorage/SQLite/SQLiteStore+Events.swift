import Foundation
import MarqueeCore
import SQLiteNIO

extension SQLiteStore {
    public func createEvent(_ event: Event) async throws -> (event: Event, created: Bool) {
        let inserted = try await query(
            """
            INSERT INTO events (id, app_id, external_key, title, attributes_type, environments, storage_policy,
                                priority_policy, planned_start, planned_end, timeline, late_joiners, state, \
            created_at, updated_at)
            SELECT ?, a.id, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? FROM apps a WHERE a.id = ?
            ON CONFLICT (app_id, external_key) DO NOTHING
            RETURNING \(RowMapping.eventColumns)
            """,
            [
                .id(event.id), .text(event.externalKey), .text(event.title), .text(event.attributesType),
                .text(ColumnCoding.environments(event.environments)), .int(event.storagePolicy.rawValue),
                .text(event.priorityPolicy?.rawValue), .date(event.plannedStart), .date(event.plannedEnd),
                .text(event.timeline.map { ColumnCoding.json($0.jsonValue) }), .bool(event.lateJoiners),
                .text(event.state.rawValue),
                .date(event.createdAt),
                .date(event.updatedAt), .id(event.appID),
            ]
        )
        if let row = inserted.first { return (try RowMapping.event(SQLiteColumns(row, entity: "event")), true) }
        if let existing = try await self.event(appID: event.appID, externalKey: event.externalKey) {
            return (existing, false)
        }
        throw StoreError.notFound(entity: "app", id: event.appID.description)
    }

    public func event(appID: AppID, id: EventID) async throws -> Event? {
        try await query(
            "SELECT \(RowMapping.eventColumns) FROM events WHERE app_id = ? AND id = ?",
            [.id(appID), .id(id)]
        )
        .first.mapped(RowMapping.event)
    }

    public func event(appID: AppID, externalKey: String) async throws -> Event? {
        try await query(
            "SELECT \(RowMapping.eventColumns) FROM events WHERE app_id = ? AND external_key = ?",
            [.id(appID), .text(externalKey)]
        ).first.mapped(RowMapping.event)
    }

    public func broadcastTarget(appID: AppID, externalKey: String) async throws -> BroadcastTarget? {
        try await query(Self.broadcastTargetSQL, [.id(appID), .text(externalKey)]).first.mapped(
            RowMapping.broadcastTarget
        )
    }

    private static let broadcastTargetSQL =
        "SELECT \(RowMapping.broadcastTargetColumns) FROM events WHERE app_id = ? AND external_key = ?"

    public func beginBroadcast(
        appID: AppID,
        externalKey: String,
        environments: Set<APNSEnvironment>,
        now: Int64,
        budgetSince: Date
    ) async throws -> BroadcastTarget? {
        // The event, then in one statement the timestamps taken on its active channels in the
        // environments asked, each with its budget use, as takeBroadcastTimestamp and
        // broadcastCount take and count them. No transaction: the store's one connection is held
        // for both statements, and a timestamp taken for a broadcast then refused is one the
        // strictly increasing sequence skips. BEGIN and COMMIT were two more trips to SQLite's
        // thread and back on every broadcast's path, and slow ones beside a busy core.
        try await access.withAccess {
            let read = try await connection.query(Self.broadcastTargetSQL, [.id(appID), .text(externalKey)])
            guard var target = try read.first.mapped(RowMapping.broadcastTarget) else { return nil }
            guard target.event.state == .scheduled || target.event.state == .live, !environments.isEmpty else {
                return target
            }
            let environments = environments.map(\.rawValue).sorted()
            let taken = try await connection.query(
                Self.takeBroadcastTimestampsSQL(environments: environments.count),
                [.int(now), .id(appID), .id(target.event.id), .date(budgetSince)] + environments.map { .text($0) }
            )
            for row in taken {
                let columns = SQLiteColumns(row)
                let channel = try RowMapping.channel(columns)
                target.taken[channel.environment] = BroadcastTake(
                    channel: channel,
                    immediateSent: try columns.int("immediate_sent")
                )
            }
            return target
        }
    }

    /// The timestamps taken on the event's active channels in `environments` environments, each
    /// with `immediate_sent`, its accepted priority-10 broadcasts since a time (binds: now, app,
    /// event, since, then the environments). The budget's priority and status are literals, as the
    /// partial index broadcast_log_budget names them.
    private static func takeBroadcastTimestampsSQL(environments: Int) -> String {
        let placeholders = (5..<(5 + environments)).map { "?\($0)" }.joined(separator: ", ")
        return """
            UPDATE channels SET last_broadcast_timestamp = MAX(?1, COALESCE(last_broadcast_timestamp + 1, ?1))
            WHERE app_id = ?2 AND event_id = ?3 AND state = 'active' AND environment IN (\(placeholders))
            RETURNING \(RowMapping.channelColumns),
                      (SELECT count(*) FROM broadcast_log b
                       WHERE b.app_id = ?2 AND b.channel_id = channels.id AND b.priority = \(APNSPriority.immediate.rawValue)
                         AND b.status = 200 AND b.sent_at >= ?4) AS immediate_sent
            """
    }

    public func setEventState(appID: AppID, id: EventID, state: EventState, at: Date) async throws -> Bool {
        let changed = try await !query(
            "UPDATE events SET state = ?, updated_at = ? WHERE app_id = ? AND id = ? RETURNING id",
            [.text(state.rawValue), .date(at), .id(appID), .id(id)]
        ).isEmpty
        if changed { announceChannelAnswer(of: id) }
        return changed
    }

    public func updateEvent(_ event: Event) async throws -> Event {
        // An edit read before a start's first accepted device cannot take the event back from live.
        let updated = try await query(
            """
            UPDATE events SET title = ?, environments = ?, priority_policy = ?, planned_start = ?, planned_end = ?, \
            timeline = ?,
                              late_joiners = ?, state = CASE WHEN state = 'live' AND ? = 'scheduled' THEN state ELSE \
            ? END, updated_at = ?
            WHERE app_id = ? AND id = ?
            RETURNING \(RowMapping.eventColumns)
            """,
            [
                .text(event.title), .text(ColumnCoding.environments(event.environments)),
                .text(event.priorityPolicy?.rawValue),
                .date(event.plannedStart),
                .date(event.plannedEnd), .text(event.timeline.map { ColumnCoding.json($0.jsonValue) }),
                .bool(event.lateJoiners),
                .text(event.state.rawValue), .text(event.state.rawValue),
                .date(event.updatedAt), .id(event.appID), .id(event.id),
            ]
        )
        guard let row = updated.first else { throw StoreError.notFound(entity: "event", id: event.id.description) }
        announceChannelAnswer(of: event.id)
        return try RowMapping.event(SQLiteColumns(row, entity: "event"))
    }

    public func events(appID: AppID, states: Set<EventState>?, afterKey: String?, limit: Int) async throws -> [Event] {
        if let states, states.isEmpty { return [] }
        guard limit > 0 else { return [] }
        // Keyset order on UNIQUE (app_id, external_key), which serves both the order and the cursor.
        var sql = "SELECT \(RowMapping.eventColumns) FROM events WHERE app_id = ?"
        var binds: [SQLiteData] = [.id(appID)]
        if let afterKey {
            sql += " AND external_key > ?"
            binds.append(.text(afterKey))
        }
        if let states {
            let names = states.map(\.rawValue).sorted()
            sql += " AND state IN (\(Self.placeholders(names.count)))"
            binds += names.map { .text($0) }
        }
        sql += " ORDER BY external_key LIMIT ?"
        binds.append(.int(limit))
        return try await query(sql, binds).mapped(RowMapping.event)
    }

    public func eventCounts(appID: AppID) async throws -> [EventState: Int64] {
        let rows = try await query(
            "SELECT state, count(*) AS count FROM events WHERE app_id = ? GROUP BY state",
            [.id(appID)]
        )
        var counts: [EventState: Int64] = [:]
        for row in rows {
            let columns = SQLiteColumns(row, entity: "event")
            counts[try columns.parse("state", as: EventState.self)] = try columns.int64("count")
        }
        return counts
    }

    public func deleteEvent(appID: AppID, id: EventID) async throws -> Bool {
        // Channels, activities (with their update tokens) and start-ledger rows go with the event
        // through their ON DELETE CASCADE foreign keys (the store turns foreign_keys on).
        let deleted = try await !query(
            "DELETE FROM events WHERE app_id = ? AND id = ? RETURNING id",
            [.id(appID), .id(id)]
        ).isEmpty
        if deleted { announceChannelAnswer(of: id) }
        return deleted
    }
}
