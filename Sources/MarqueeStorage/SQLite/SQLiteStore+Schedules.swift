import Foundation
import MarqueeCore
import SQLiteNIO

extension SQLiteStore {
    public func createSchedule(_ schedule: Schedule) async throws -> Bool {
        let job = schedule.job
        let created = try await write { connection in
            // A timeline step of a kind the event has is a conflict on schedules_one_timeline_step, and
            // one of a closed event is no step at all: nothing is inserted, and the job is not either.
            let inserted = try await connection.query(
                """
                INSERT INTO schedules (id, app_id, event_id, kind, origin, due_at, state, request, outcome, \
                last_error, attempts,
                                       performed_at, created_at, updated_at)
                SELECT ?, e.app_id, e.id, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? FROM events e WHERE e.app_id = ? AND e.id = ?
                  AND (? <> 'timeline' OR e.state IN ('scheduled', 'live'))
                ON CONFLICT (event_id, kind) WHERE origin = 'timeline' AND state <> 'cancelled' DO NOTHING
                RETURNING id
                """,
                [
                    .id(schedule.id), .text(schedule.kind.rawValue), .text(schedule.origin.rawValue),
                    .date(schedule.dueAt),
                    .text(schedule.state.rawValue), .text(ColumnCoding.json(schedule.request)),
                    .text(schedule.outcome.map(ColumnCoding.json)), .text(schedule.lastError), .int(schedule.attempts),
                    .date(schedule.performedAt), .date(schedule.createdAt), .date(schedule.updatedAt),
                    .id(schedule.appID),
                    .id(schedule.eventID), .text(schedule.origin.rawValue),
                ]
            )
            guard !inserted.isEmpty else {
                let event = try await connection.query(
                    "SELECT 1 FROM events WHERE app_id = ? AND id = ?",
                    [.id(schedule.appID), .id(schedule.eventID)]
                )
                if schedule.origin == .timeline && !event.isEmpty { return false }
                throw StoreError.notFound(entity: "event", id: schedule.eventID.description)
            }
            _ = try await connection.query(
                """
                INSERT INTO jobs (id, app_id, kind, arguments, due_at, state, attempts, created_at, updated_at)
                VALUES (?, ?, ?, ?, ?, 'pending', 0, ?, ?)
                """,
                [
                    .id(job.id), .id(job.appID), .text(job.kind.rawValue), .text(ColumnCoding.json(job.arguments)),
                    .date(job.dueAt),
                    .date(job.createdAt), .date(job.updatedAt),
                ]
            )
            return true
        }
        if created, ChannelAnswerChanges.concerns(kind: schedule.kind, origin: schedule.origin) {
            announceChannelAnswer(of: schedule.eventID)
        }
        return created
    }

    public func schedule(appID: AppID, id: ScheduleID) async throws -> Schedule? {
        try await query(
            "SELECT \(RowMapping.scheduleColumns) FROM schedules WHERE app_id = ? AND id = ?",
            [.id(appID), .id(id)]
        )
        .first.mapped(RowMapping.schedule)
    }

    public func schedules(
        appID: AppID,
        eventID: EventID,
        after: ScheduleListPosition?,
        limit: Int
    ) async throws -> [Schedule] {
        var sql = "SELECT \(RowMapping.scheduleColumns) FROM schedules WHERE app_id = ? AND event_id = ?"
        var binds: [SQLiteData] = [.id(appID), .id(eventID)]
        if let after {
            sql += " AND (due_at > ? OR (due_at = ? AND id > ?))"
            binds += [.date(after.dueAt), .date(after.dueAt), .id(after.id)]
        }
        sql += " ORDER BY due_at, id LIMIT ?"
        binds.append(.int(max(1, limit)))
        return try await query(sql, binds).mapped(RowMapping.schedule)
    }

    public func timelineSteps(appID: AppID, eventID: EventID) async throws -> [Schedule] {
        try await query(
            """
            SELECT \(RowMapping.scheduleColumns) FROM schedules
            WHERE app_id = ? AND event_id = ? AND origin = 'timeline' AND state <> 'cancelled'
            ORDER BY due_at, id
            """,
            [.id(appID), .id(eventID)]
        ).mapped(RowMapping.schedule)
    }

    public func cancelSchedule(
        appID: AppID,
        id: ScheduleID,
        state: ScheduleState,
        outcome: JSONValue?,
        at: Date
    ) async throws -> (schedule: Schedule, changed: Bool)? {
        let result: (schedule: Schedule, changed: Bool)? = try await write { connection in
            let cancelled = try await connection.query(
                """
                UPDATE schedules SET state = ?, outcome = ?, updated_at = ?
                WHERE app_id = ? AND id = ? AND state = 'pending'
                RETURNING \(RowMapping.scheduleColumns)
                """,
                [.text(state.rawValue), .text(outcome.map(ColumnCoding.json)), .date(at), .id(appID), .id(id)]
            ).first.mapped(RowMapping.schedule)
            if let cancelled {
                // A worker that leased the job meanwhile finds it cancelled when it renews or finishes.
                _ = try await connection.query(Self.cancelJobSQL, [.date(at), .id(id)])
                return (cancelled, true)
            }
            let current = try await connection.query(
                "SELECT \(RowMapping.scheduleColumns) FROM schedules WHERE app_id = ? AND id = ?",
                [.id(appID), .id(id)]
            ).first.mapped(RowMapping.schedule)
            return current.map { ($0, false) }
        }
        if let result, result.changed,
            ChannelAnswerChanges.concerns(kind: result.schedule.kind, origin: result.schedule.origin)
        {
            announceChannelAnswer(of: result.schedule.eventID)
        }
        return result
    }

    public func cancelSchedules(appID: AppID, eventID: EventID, at: Date) async throws -> Int {
        let count = try await write { connection in
            let cancelled = try await connection.query(
                """
                UPDATE schedules SET state = 'cancelled', updated_at = ? WHERE app_id = ? AND event_id = ? AND \
                state = 'pending' RETURNING id
                """,
                [.date(at), .id(appID), .id(eventID)]
            )
            for row in cancelled {
                _ = try await connection.query(
                    Self.cancelJobSQL,
                    [.date(at), .uuid(try SQLiteColumns(row, entity: "schedule").uuid("id"))]
                )
            }
            return cancelled.count
        }
        if count > 0 { announceChannelAnswer(of: eventID) }
        return count
    }

    public func moveSchedule(appID: AppID, id: ScheduleID, to dueAt: Date, at: Date) async throws -> Bool {
        let moved = try await write { connection -> EventID?? in
            let moved = try await connection.query(
                """
                UPDATE schedules SET due_at = ?, updated_at = ? WHERE app_id = ? AND id = ? AND state = 'pending' \
                RETURNING \(RowMapping.scheduleAnswerColumns)
                """,
                [.date(dueAt), .date(at), .id(appID), .id(id)]
            )
            guard let row = moved.first else { return nil }
            // A job a worker holds is left alone: beginSchedule finds the schedule not due and the
            // worker hands the job back for the new time.
            _ = try await connection.query(
                "UPDATE jobs SET due_at = ?, updated_at = ? WHERE id = ? AND state = 'pending'",
                [.date(dueAt), .date(at), .id(id)]
            )
            return try RowMapping.scheduleAnswerEvent(SQLiteColumns(row, entity: "schedule"))
        }
        guard let moved else { return false }
        announceChannelAnswer(of: moved)
        return true
    }

    public func beginSchedule(appID: AppID, id: ScheduleID, now: Date) async throws -> Schedule? {
        let begun = try await query(
            """
            UPDATE schedules SET state = 'running', attempts = attempts + 1, updated_at = ?1
            WHERE app_id = ?2 AND id = ?3 AND ((state = 'pending' AND due_at <= ?1) OR state = 'running')
            RETURNING \(RowMapping.scheduleColumns)
            """,
            [.date(now), .id(appID), .id(id)]
        ).first.mapped(RowMapping.schedule)
        if let begun { return begun }
        return try await schedule(appID: appID, id: id)
    }

    public func finishSchedule(
        appID: AppID,
        id: ScheduleID,
        state: ScheduleState,
        outcome: JSONValue?,
        error: String?,
        at: Date
    ) async throws -> Bool {
        // A finished `close` step no longer gives the event's channel an expiry.
        guard
            let row = try await query(
                """
                UPDATE schedules SET state = ?, outcome = ?, last_error = ?, performed_at = ?, updated_at = ?
                WHERE app_id = ? AND id = ? AND state = 'running'
                RETURNING \(RowMapping.scheduleAnswerColumns)
                """,
                [
                    .text(state.rawValue), .text(outcome.map(ColumnCoding.json)), .text(error), .date(at), .date(at),
                    .id(appID), .id(id),
                ]
            ).first
        else { return false }
        announceChannelAnswer(of: try RowMapping.scheduleAnswerEvent(SQLiteColumns(row, entity: "schedule")))
        return true
    }

    private static let cancelJobSQL = """
        UPDATE jobs SET state = 'cancelled', lease_owner = NULL, lease_expires_at = NULL, updated_at = ?
        WHERE id = ? AND state IN ('pending', 'running')
        """
}
