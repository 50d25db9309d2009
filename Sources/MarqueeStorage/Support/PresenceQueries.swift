import Foundation
import MarqueeCore

/// The statements of devices' reports and the funnel, written once for both dialects: they differ
/// only in how a parameter is named (`$1` in PostgreSQL, `?1` in SQLite). JSON fields are read with
/// `->>`, which both have (SQLite since 3.38), and counts are cast to `bigint` with `CAST`.
enum PresenceQueries {
    typealias Placeholder = (Int) -> String

    static let presenceColumns = "event_id, token_id, environment, state, activity_id, first_reported_at, reported_at"

    static func presence(_ row: some ColumnReader) throws -> DevicePresence {
        DevicePresence(
            eventID: try row.id("event_id"),
            tokenRowID: try row.int64("token_id"),
            environment: try row.parse("environment", as: APNSEnvironment.self),
            state: try row.parse("state", as: PresenceState.self),
            activityID: try row.optionalString("activity_id"),
            firstReportedAt: try row.date("first_reported_at"),
            reportedAt: try row.date("reported_at")
        )
    }

    /// Records a report unless the device's window is full. Parameters: 1 app, 2 event, 3 token
    /// row, 4 environment, 5 state, 6 activity ID, 7 the time, 8 the time the current window must
    /// have begun after to still count (NULL: no bound, the window is left as it is), 9 the bound.
    /// No row comes back when the event or the token row is not the app's, or the window is full.
    /// Parameters 6 and 8 may be NULL, which PostgreSQL cannot type from the statement: they are
    /// cast (in SQLite a cast to `timestamptz` is a numeric affinity, which leaves its integer
    /// microseconds as they are).
    static func record(_ p: Placeholder) -> String {
        let since = "CAST(\(p(8)) AS timestamptz)"
        return """
        INSERT INTO device_presence AS p
            (event_id, token_id, app_id, environment, state, activity_id, first_reported_at, reported_at,
             window_started_at, reports_in_window)
        SELECT e.id, t.id, e.app_id, \(p(4)), \(p(5)), CAST(\(p(6)) AS text), \(p(7)), \(p(7)), \(p(7)), 1
        FROM events e JOIN push_to_start_tokens t ON t.app_id = e.app_id AND t.id = \(p(3))
        WHERE e.app_id = \(p(1)) AND e.id = \(p(2))
        ON CONFLICT (event_id, token_id) DO UPDATE SET
            environment = excluded.environment,
            state = excluded.state,
            activity_id = excluded.activity_id,
            reported_at = excluded.reported_at,
            window_started_at = CASE WHEN \(since) IS NULL THEN p.window_started_at
                                     WHEN p.window_started_at <= \(since) THEN excluded.reported_at
                                     ELSE p.window_started_at END,
            reports_in_window = CASE WHEN \(since) IS NULL THEN p.reports_in_window
                                     WHEN p.window_started_at <= \(since) THEN 1
                                     ELSE p.reports_in_window + 1 END
        WHERE \(since) IS NULL OR p.window_started_at <= \(since) OR p.reports_in_window < \(p(9))
        RETURNING \(presenceColumns)
        """
    }

    /// The event's start jobs (the job the API shows and its parts). Parameters: 1 app, 3 the
    /// event's ID as text (as the jobs' arguments carry it), 4 and 5 the two job kinds.
    private static func startJobs(_ p: Placeholder) -> String {
        """
        SELECT j.id, j.parent_id, j.kind, j.progress_total, j.arguments ->> 'environment' AS environment,
               j.arguments ->> 'uncertainOf' AS uncertain_of, j.arguments ->> 'reason' AS reason
        FROM jobs j
        WHERE j.app_id = \(p(1)) AND j.kind IN (\(p(4)), \(p(5))) AND j.arguments ->> 'eventID' = \(p(3))
        """
    }

    /// Whether the ledger has the device for the event, and whether one of the event's start jobs
    /// left its start uncertain. Parameters: 1 app, 2 event, 3 the event as text, 4 and 5 the start
    /// job kinds, 6 the token row.
    static func standing(_ p: Placeholder) -> String {
        """
        SELECT
            CASE WHEN EXISTS (SELECT 1 FROM start_ledger s WHERE s.event_id = \(p(2)) AND s.token_id = \(p(6)))
                 THEN 1 ELSE 0 END AS started,
            CASE WHEN EXISTS (SELECT 1 FROM (\(startJobs(p))) j JOIN deliveries d ON d.job_id = j.id
                              WHERE d.token_id = \(p(6)) AND d.outcome = 'uncertain')
                 THEN 1 ELSE 0 END AS uncertain
        """
    }

    /// The funnel's counts, one row per environment, stage and (for rejections) APNs' reason, in
    /// one statement: `environment`, `stage` (a `FunnelStage`), `reason` ('' but for rejections by
    /// reason) and `devices`. Parameters: 1 app, 2 event, 3 the event as text, 4 and 5 the start
    /// job kinds. An outcome other than accepted counts only for a device the ledger does not have:
    /// a device rejected or left uncertain by one start and accepted by a later one is accepted.
    /// Late joiners started and absent-then-started devices are ledger entries by the arguments of
    /// the job that wrote them (`lateJoin` is JSON `true`, which `->>` reads as 'true' in
    /// PostgreSQL and 1 in SQLite).
    static func funnel(_ p: Placeholder) -> String {
        """
        WITH starts AS (\(startJobs(p))),
        ledger AS (
            SELECT t.environment, s.token_id,
                   CASE WHEN CAST(j.arguments ->> 'lateJoin' AS text) IN ('true', '1') THEN 1 ELSE 0 END AS late_join,
                   CASE WHEN j.arguments ->> 'reason' = 'absent' THEN 1 ELSE 0 END AS after_absent
            FROM start_ledger s
            JOIN push_to_start_tokens t ON t.id = s.token_id AND t.app_id = \(p(1))
            LEFT JOIN jobs j ON j.id = s.job_id
            WHERE s.event_id = \(p(2))
        ),
        outcomes AS (
            SELECT DISTINCT t.environment, d.token_id, d.outcome, COALESCE(d.reason, 'none') AS reason
            FROM starts j
            JOIN deliveries d ON d.job_id = j.id
            JOIN push_to_start_tokens t ON t.id = d.token_id
            WHERE d.outcome IN ('rejected', 'token_invalid', 'uncertain', 'failed')
              AND NOT EXISTS (SELECT 1 FROM start_ledger s WHERE s.event_id = \(p(2)) AND s.token_id = d.token_id)
        ),
        reports AS (
            SELECT environment, CASE state WHEN 'dismissed' THEN 'ended' ELSE state END AS stage
            FROM device_presence WHERE app_id = \(p(1)) AND event_id = \(p(2))
        )
        SELECT environment, 'targeted' AS stage, '' AS reason, CAST(COALESCE(sum(progress_total), 0) AS bigint) AS devices
        FROM starts WHERE parent_id IS NULL AND kind = \(p(4)) AND uncertain_of IS NULL AND reason IS NULL
        GROUP BY environment
        UNION ALL
        SELECT environment, 'sent', '', CAST(count(*) AS bigint)
        FROM (SELECT environment, token_id FROM ledger UNION SELECT environment, token_id FROM outcomes) sent
        GROUP BY environment
        UNION ALL
        SELECT environment, 'accepted', '', CAST(count(*) AS bigint) FROM ledger GROUP BY environment
        UNION ALL
        SELECT environment, 'lateJoinersStarted', '', CAST(count(*) AS bigint) FROM ledger WHERE late_join = 1 GROUP BY environment
        UNION ALL
        SELECT environment, 'absentThenStarted', '', CAST(count(*) AS bigint) FROM ledger WHERE after_absent = 1 GROUP BY environment
        UNION ALL
        SELECT environment, 'rejected', '', CAST(count(DISTINCT token_id) AS bigint)
        FROM outcomes WHERE outcome IN ('rejected', 'token_invalid') GROUP BY environment
        UNION ALL
        SELECT environment, 'rejected', reason, CAST(count(DISTINCT token_id) AS bigint)
        FROM outcomes WHERE outcome IN ('rejected', 'token_invalid') GROUP BY environment, reason
        UNION ALL
        SELECT environment, outcome, '', CAST(count(DISTINCT token_id) AS bigint)
        FROM outcomes WHERE outcome IN ('uncertain', 'failed') GROUP BY environment, outcome
        UNION ALL
        SELECT environment, stage, '', CAST(count(*) AS bigint) FROM reports GROUP BY environment, stage
        """
    }

    /// The funnel's rows gathered per environment.
    static func funnels(_ rows: [(environment: String, stage: String, reason: String, devices: Int64)]) throws -> [DeliveryFunnel] {
        var funnels: [APNSEnvironment: DeliveryFunnel] = [:]
        for row in rows {
            let environment = try ColumnCoding.parse(APNSEnvironment.self, row.environment, entity: "funnel")
            let stage = try ColumnCoding.parse(FunnelStage.self, row.stage, entity: "funnel")
            var funnel = funnels[environment] ?? DeliveryFunnel(environment: environment)
            if stage == .rejected, !row.reason.isEmpty {
                funnel.rejectedByReason[row.reason] = row.devices
            } else {
                funnel[stage] = row.devices
            }
            funnels[environment] = funnel
        }
        return funnels.values.sorted { $0.environment.rawValue < $1.environment.rawValue }
    }
}
