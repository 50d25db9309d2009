import Foundation
import MarqueeCore
import PostgresNIO

extension PostgresStore {
    public func createSchedule(_ schedule: Schedule) async throws -> Bool {
        let job = schedule.job
        let created = try await transaction { connection in
            // A timeline step of a kind the event has is a conflict on schedules_one_timeline_step, and
            // one of a closed event is no step at all: nothing is inserted, and the job is not either.
            let inserted = try await connection.query(
                """
                INSERT INTO schedules (id, app_id, event_id, kind, origin, due_at, state, request, outcome, \
                last_error, attempts,
                                       performed_at, created_at, updated_at)
                SELECT \(schedule.id.uuid), e.app_id, e.id, \(schedule.kind.rawValue), \(schedule.origin.rawValue),
                       \(schedule.dueAt), \(schedule.state.rawValue), \(ColumnCoding.json(schedule.request))::json,
                       \(schedule.outcome.map(ColumnCoding.json))::json, \(schedule.lastError), \(schedule.attempts),
                       \(schedule.performedAt), \(schedule.createdAt), \(schedule.updatedAt)
                FROM events e WHERE e.app_id = \(schedule.appID.uuid) AND e.id = \(schedule.eventID.uuid)
                  AND (\(schedule.origin.rawValue) <> 'timeline' OR e.state IN ('scheduled', 'live'))
                ON CONFLICT (event_id, kind) WHERE origin = 'timeline' AND state <> 'cancelled' DO NOTHING
                RETURNING id, \(unescaped: Self.notifyScheduleChannelAnswer)
                """,
                logger: logger
            ).collect()
            guard !inserted.isEmpty else {
                if schedule.origin == .timeline,
                    try await !connection.query(
                        "SELECT 1 FROM events WHERE app_id = \(schedule.appID.uuid) AND id = \(schedule.eventID.uuid)",
                        logger: logger
                    ).collect().isEmpty
                {
                    return false
                }
                throw StoreError.notFound(entity: "event", id: schedule.eventID.description)
            }
            _ = try await connection.query(
                """
                INSERT INTO jobs (id, app_id, kind, arguments, due_at, state, attempts, created_at, updated_at)
                VALUES (\(job.id.uuid), \(job.appID.uuid), \(job.kind.rawValue), \
                \(ColumnCoding.json(job.arguments))::json,
                        \(job.dueAt), 'pending', 0, \(job.createdAt), \(job.updatedAt))
                RETURNING id, pg_notify(\(Self.jobsChannel), kind)
                """,
                logger: logger
            ).collect()
            return true
        }
        if created, ChannelAnswerChanges.concerns(kind: schedule.kind, origin: schedule.origin) {
            announceChannelAnswer(of: schedule.eventID)
        }
        return created
    }

    public func schedule(appID: AppID, id: ScheduleID) async throws -> Schedule? {
        try await firstRow(
            """
            SELECT \(unescaped: RowMapping.scheduleColumns) FROM schedules WHERE app_id = \(appID.uuid) AND id = \
            \(id.uuid)
            """
        ).mapped(RowMapping.schedule)
    }

    public func schedules(
        appID: AppID,
        eventID: EventID,
        after: ScheduleListPosition?,
        limit: Int
    ) async throws -> [Schedule] {
        try await rows(
            """
            SELECT \(unescaped: RowMapping.scheduleColumns) FROM schedules
            WHERE app_id = \(appID.uuid) AND event_id = \(eventID.uuid)
              AND (\(after == nil) OR (due_at, id) > (\(exactTime: after?.dueAt), \(after?.id.uuid ?? UUID.random())::uuid))
            ORDER BY due_at, id
            LIMIT \(max(1, limit))
            """
        ).mapped(RowMapping.schedule)
    }

    public func timelineSteps(appID: AppID, eventID: EventID) async throws -> [Schedule] {
        try await rows(
            """
            SELECT \(unescaped: RowMapping.scheduleColumns) FROM schedules
            WHERE app_id = \(appID.uuid) AND event_id = \(eventID.uuid) AND origin = 'timeline' AND state <> 'cancelled'
            ORDER BY due_at, id
            """
        ).mapped(RowMapping.schedule)
    }

    public func cancelSchedule(
        appID: AppID,
        id: ScheduleID,
        state: ScheduleState,
        outcome: JSONValue?,
        at: Date
    ) async throws -> (schedule: Schedule, changed: Bool)? {
        let result: (schedule: Schedule, changed: Bool)? = try await transaction { connection in
            let cancelled = try await connection.query(
                """
                UPDATE schedules SET state = \(state.rawValue), outcome = \(outcome.map(ColumnCoding.json))::json, \
                updated_at = \(at)
                WHERE app_id = \(appID.uuid) AND id = \(id.uuid) AND state = 'pending'
                RETURNING \(unescaped: RowMapping.scheduleColumns), \(unescaped: Self.notifyScheduleChannelAnswer)
                """,
                logger: logger
            ).collect().first.mapped(RowMapping.schedule)
            if let cancelled {
                // A worker that leased the job meanwhile finds it cancelled when it renews or finishes.
                _ = try await connection.query(Self.cancelJobQuery(id: id, at: at), logger: logger).collect()
                return (cancelled, true)
            }
            let current = try await connection.query(
                """
                SELECT \(unescaped: RowMapping.scheduleColumns) FROM schedules WHERE app_id = \(appID.uuid) AND \
                id = \(id.uuid)
                """,
                logger: logger
            ).collect().first.mapped(RowMapping.schedule)
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
        let count = try await transaction { connection in
            let cancelled = try await connection.query(
                """
                UPDATE schedules SET state = 'cancelled', updated_at = \(at)
                WHERE app_id = \(appID.uuid) AND event_id = \(eventID.uuid) AND state = 'pending'
                RETURNING id, \(unescaped: Self.notifyScheduleChannelAnswer)
                """,
                logger: logger
            ).collect()
            let ids = try cancelled.map { try $0.decode(UUID.self) }
            if !ids.isEmpty {
                _ = try await connection.query(
                    """
                    UPDATE jobs SET state = 'cancelled', lease_owner = NULL, lease_expires_at = NULL, updated_at = \(at)
                    WHERE id = ANY(\(ids)) AND state IN ('pending', 'running')
                    """,
                    logger: logger
                ).collect()
            }
            return ids.count
        }
        if count > 0 { announceChannelAnswer(of: eventID) }
        return count
    }

    public func moveSchedule(appID: AppID, id: ScheduleID, to dueAt: Date, at: Date) async throws -> Bool {
        let moved = try await transaction { connection -> EventID?? in
            let moved = try await connection.query(
                """
                UPDATE schedules SET due_at = \(dueAt), updated_at = \(at)
                WHERE app_id = \(appID.uuid) AND id = \(id.uuid) AND state = 'pending'
                RETURNING \(unescaped: RowMapping.scheduleAnswerColumns), \(unescaped: Self.notifyScheduleChannelAnswer)
                """,
                logger: logger
            ).collect()
            guard let row = moved.first else { return nil }
            // A job a worker holds is left alone: beginSchedule finds the schedule not due and the
            // worker hands the job back for the new time.
            _ = try await connection.query(
                """
                UPDATE jobs SET due_at = \(dueAt), updated_at = \(at)
                WHERE id = \(id.uuid) AND state = 'pending'
                RETURNING id, pg_notify(\(Self.jobsChannel), kind)
                """,
                logger: logger
            ).collect()
            return try RowMapping.scheduleAnswerEvent(PostgresColumns(row, entity: "schedule"))
        }
        guard let moved else { return false }
        announceChannelAnswer(of: moved)
        return true
    }

    public func beginSchedule(appID: AppID, id: ScheduleID, now: Date) async throws -> Schedule? {
        let begun = try await firstRow(
            """
            UPDATE schedules SET state = 'running', attempts = attempts + 1, updated_at = \(now)
            WHERE app_id = \(appID.uuid) AND id = \(id.uuid)
              AND ((state = 'pending' AND due_at <= \(now)) OR state = 'running')
            RETURNING \(unescaped: RowMapping.scheduleColumns)
            """
        ).mapped(RowMapping.schedule)
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
            let row = try await firstRow(
                """
                UPDATE schedules SET state = \(state.rawValue), outcome = \(outcome.map(ColumnCoding.json))::json, \
                last_error = \(error),
                                     performed_at = \(at), updated_at = \(at)
                WHERE app_id = \(appID.uuid) AND id = \(id.uuid) AND state = 'running'
                RETURNING \(unescaped: RowMapping.scheduleAnswerColumns), \(unescaped: Self.notifyScheduleChannelAnswer)
                """
            )
        else { return false }
        announceChannelAnswer(of: try RowMapping.scheduleAnswerEvent(PostgresColumns(row, entity: "schedule")))
        return true
    }

    private static func cancelJobQuery(id: ScheduleID, at: Date) -> PostgresQuery {
        """
        UPDATE jobs SET state = 'cancelled', lease_owner = NULL, lease_expires_at = NULL, updated_at = \(at)
        WHERE id = \(id.uuid) AND state IN ('pending', 'running')
        """
    }
}
