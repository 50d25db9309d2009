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
    /// `state_since` moves only when the state does (`ended` and `dismissed` are one state there,
    /// as in the funnel): the funnel over time counts a device in its stage from then.
    /// No row comes back when the event or the token row is not the app's, or the window is full.
    /// Parameters 6 and 8 may be NULL, which PostgreSQL cannot type from the statement: they are
    /// cast (in SQLite a cast to `timestamptz` is a numeric affinity, which leaves its integer
    /// microseconds as they are).
    static func record(_ p: Placeholder) -> String {
        let since = "CAST(\(p(8)) AS timestamptz)"
        return """
            INSERT INTO device_presence AS p
                (event_id, token_id, app_id, environment, state, activity_id, first_reported_at, reported_at,
                 window_started_at, reports_in_window, state_since)
            SELECT e.id, t.id, e.app_id, \(p(4)), \(p(5)), CAST(\(p(6)) AS text), \(p(7)), \(p(7)), \(p(7)), 1, \(p(7))
            FROM events e JOIN push_to_start_tokens t ON t.app_id = e.app_id AND t.id = \(p(3))
            WHERE e.app_id = \(p(1)) AND e.id = \(p(2))
            ON CONFLICT (event_id, token_id) DO UPDATE SET
                environment = excluded.environment,
                state = excluded.state,
                activity_id = excluded.activity_id,
                reported_at = excluded.reported_at,
                state_since = CASE WHEN \(stage("p.state")) = \(stage("excluded.state")) THEN p.state_since
                                   ELSE excluded.reported_at END,
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

    /// The event's start jobs (the job the API shows and its parts), with what the funnel reads
    /// of their arguments (`lateJoin` is JSON `true`, which `->>` reads as 'true' in PostgreSQL and
    /// 1 in SQLite). Parameters: 1 app, 3 the event's ID as text (as the jobs' arguments carry it),
    /// 4 and 5 the two job kinds.
    private static func startJobs(_ p: Placeholder) -> String {
        """
        SELECT j.id, j.parent_id, j.kind, j.progress_total, j.arguments ->> 'environment' AS environment,
               j.arguments ->> 'uncertainOf' AS uncertain_of, j.arguments ->> 'reason' AS reason,
               CASE WHEN CAST(j.arguments ->> 'lateJoin' AS text) IN ('true', '1') THEN 1 ELSE 0 END AS late_join
        FROM jobs j
        WHERE j.app_id = \(p(1)) AND j.kind IN (\(p(4)), \(p(5))) AND j.arguments ->> 'eventID' = \(p(3))
        """
    }

    /// The event's start ledger entries of the app's devices, with when each was sent and answered
    /// and what the start job that wrote it says (late join, restart after an absent report), read
    /// from `starts` (`startJobs`, which the statement defines first): the arguments are parsed
    /// once a job, not once an entry (per entry, a 300,000-device event's funnel took 5 s).
    /// Parameters: 1 app, 2 event. An entry written before 0008 has no `sent_at`: it was sent when
    /// it was answered, as far as anyone knows.
    private static func ledger(_ p: Placeholder) -> String {
        """
        SELECT t.environment, s.token_id, COALESCE(s.sent_at, s.started_at) AS sent_at, s.started_at,
               COALESCE(j.late_join, 0) AS late_join,
               CASE WHEN j.reason = 'absent' THEN 1 ELSE 0 END AS after_absent
        FROM start_ledger s
        JOIN push_to_start_tokens t ON t.id = s.token_id AND t.app_id = \(p(1))
        LEFT JOIN starts j ON j.id = s.job_id
        WHERE s.event_id = \(p(2))
        """
    }

    /// A reported state as the funnel counts it: `dismissed` is `ended`.
    private static func stage(_ column: String) -> String {
        "CASE \(column) WHEN 'dismissed' THEN 'ended' ELSE \(column) END"
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

    /// The event's start ledger entries counted per job that wrote them, grouped before anything is
    /// joined: a start job's devices are of its environment, so its entries need no token row
    /// (30 ms for a 100,000-device event beside 500,000 other entries, idle, read through the
    /// primary key: PostgreSQL's statement runs without parallel workers, `PostgresStore.wholeAudienceRows`,
    /// where a parallel plan scanned the whole ledger on three processes). Joining every entry
    /// to its token row for the environment hashed the app's whole token table and scanned the
    /// whole ledger for each live event's funnel (0.1 s idle at 600,000 entries, 0.5-0.9 s in the
    /// match-day soak, growing with every start). Parameters: 1 app, 2 event.
    private static func ledgerJobs(_ p: Placeholder) -> String {
        """
        SELECT s.job_id, CAST(count(*) AS bigint) AS entries
        FROM start_ledger s WHERE s.event_id = \(p(2)) AND s.app_id = \(p(1))
        GROUP BY s.job_id
        """
    }

    /// The event's start ledger entries counted per environment: every entry (the devices
    /// accepted), those a late-join start wrote, and those a restart after an absent report wrote,
    /// from `ledger_jobs` (`ledgerJobs`) and `starts`, which the statement defines first. An entry
    /// no start job of the event wrote (a device's own confirmation has none) takes its token row's
    /// environment; the one-time check before that branch skips its scan when there is none, as
    /// there mostly is not.
    private static func ledgerCounts(_ p: Placeholder) -> String {
        """
        SELECT environment, CAST(sum(accepted) AS bigint) AS accepted,
               CAST(sum(late_joiners) AS bigint) AS late_joiners, CAST(sum(after_absent) AS bigint) AS after_absent
        FROM (
            SELECT j.environment, g.entries AS accepted, g.entries * j.late_join AS late_joiners,
                   CASE WHEN j.reason = 'absent' THEN g.entries ELSE 0 END AS after_absent
            FROM ledger_jobs g JOIN starts j ON j.id = g.job_id
            UNION ALL
            SELECT t.environment, 1, 0, 0
            FROM start_ledger s JOIN push_to_start_tokens t ON t.id = s.token_id
            WHERE EXISTS (SELECT 1 FROM ledger_jobs g WHERE g.job_id IS NULL
                                                         OR NOT EXISTS (SELECT 1 FROM starts j WHERE j.id = g.job_id))
              AND s.event_id = \(p(2)) AND s.app_id = \(p(1))
              AND (s.job_id IS NULL OR NOT EXISTS (SELECT 1 FROM starts j WHERE j.id = s.job_id))
        ) entries
        GROUP BY environment
        """
    }

    /// The funnel's counts, one row per environment, stage and (for rejections) APNs' reason, in
    /// one statement: `environment`, `stage` (a `FunnelStage`), `reason` ('' but for rejections by
    /// reason) and `devices`. Parameters: 1 app, 2 event, 3 the event as text, 4 and 5 the start
    /// job kinds. An outcome other than accepted counts only for a device the ledger does not have:
    /// a device rejected or left uncertain by one start and accepted by a later one is accepted.
    /// So the devices sent a start are the ledger's plus the other outcomes' (the two never share a
    /// device), a sum rather than a union: the ledger is read once, grouped, never sorted (a
    /// 300,000-device event's union took 0.8 s, the sum 0.3 s).
    static func funnel(_ p: Placeholder) -> String {
        """
        WITH starts AS (\(startJobs(p))),
        ledger_jobs AS (\(ledgerJobs(p))),
        ledger AS (\(ledgerCounts(p))),
        outcomes AS (
            SELECT DISTINCT t.environment, d.token_id, d.outcome, COALESCE(d.reason, 'none') AS reason
            FROM starts j
            JOIN deliveries d ON d.job_id = j.id
            JOIN push_to_start_tokens t ON t.id = d.token_id
            WHERE d.outcome IN ('rejected', 'token_invalid', 'uncertain', 'failed')
              AND NOT EXISTS (SELECT 1 FROM start_ledger s WHERE s.event_id = \(p(2)) AND s.token_id = d.token_id)
        ),
        reports AS (
            SELECT environment, \(stage("state")) AS stage
            FROM device_presence WHERE app_id = \(p(1)) AND event_id = \(p(2))
        )
        SELECT environment, 'targeted' AS stage, '' AS reason, CAST(COALESCE(sum(progress_total), 0) AS bigint) AS \
        devices
        FROM starts WHERE parent_id IS NULL AND kind = \(p(4)) AND uncertain_of IS NULL AND reason IS NULL
        GROUP BY environment
        UNION ALL
        SELECT environment, 'sent', '', CAST(sum(devices) AS bigint)
        FROM (SELECT environment, accepted AS devices FROM ledger
              UNION ALL
              SELECT environment, CAST(count(DISTINCT token_id) AS bigint) FROM outcomes GROUP BY environment) sent
        GROUP BY environment
        UNION ALL
        SELECT environment, 'accepted', '', accepted FROM ledger
        UNION ALL
        SELECT environment, 'lateJoinersStarted', '', late_joiners FROM ledger WHERE late_joiners > 0
        UNION ALL
        SELECT environment, 'absentThenStarted', '', after_absent FROM ledger WHERE after_absent > 0
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
    static func funnels(
        _ rows: [(environment: String, stage: String, reason: String, devices: Int64)]
    ) throws -> [DeliveryFunnel] {
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

extension PresenceQueries {
    /// How each dialect turns a time column into integer microseconds since 1970: PostgreSQL from
    /// `timestamptz`, SQLite as it stores times (`{ $0 }`).
    typealias Microseconds = (String) -> String

    /// The funnel over time (`DeliveryFunnelTimeline`) in one statement: the moment each device
    /// entered each of `DeliveryFunnelTimeline.stages` (the same rows `funnel` counts, so the last
    /// bucket equals its totals), the buckets' origin (the first of those moments), their end
    /// (parameter 6 or the last moment, whichever is later) and their width (the span over parameter
    /// 7, rounded up to whole seconds: `DeliveryFunnelTimeline.stepMicroseconds`), and one row per
    /// environment, stage and bucket that counts devices: `environment`, `stage`, `bucket`,
    /// `devices`, `origin`, `step`, `finish` (times in microseconds). No row before the first send.
    /// Parameters: 1 app, 2 event, 3 the event as text, 4 and 5 the start job kinds, 6 the end in
    /// microseconds, 7 `DeliveryFunnelTimeline.stepDivisorMicroseconds`.
    static func timeline(_ p: Placeholder, microseconds: Microseconds) -> String {
        let end = "CAST(\(p(6)) AS bigint)"
        let divisor = "CAST(\(p(7)) AS bigint)"
        return """
            WITH starts AS (\(startJobs(p))),
            ledger AS (\(ledger(p))),
            sends AS (
                SELECT environment, token_id, sent_at AS at FROM ledger
                UNION ALL
                SELECT t.environment, d.token_id, d.sent_at
                FROM starts j
                JOIN deliveries d ON d.job_id = j.id
                JOIN push_to_start_tokens t ON t.id = d.token_id
                WHERE d.outcome IN ('rejected', 'token_invalid', 'uncertain', 'failed')
            ),
            moments AS (
                SELECT environment, 'sent' AS stage, min(at) AS at FROM sends GROUP BY environment, token_id
                UNION ALL
                SELECT environment, 'accepted', started_at FROM ledger
                UNION ALL
                SELECT environment, 'lateJoinersStarted', started_at FROM ledger WHERE late_join = 1
                UNION ALL
                SELECT environment, \(stage("state")), state_since
                FROM device_presence WHERE app_id = \(p(1)) AND event_id = \(p(2)) AND state <> 'absent'
            ),
            stamped AS (SELECT environment, stage, \(microseconds("at")) AS at FROM moments),
            span AS (
                SELECT min(at) AS origin, CASE WHEN max(at) > \(end) THEN max(at) ELSE \(end) END AS finish
                FROM stamped
            ),
            bounds AS (
                SELECT origin, finish,
                       1000000 * CASE WHEN (finish - origin + \(divisor) - 1) / \(divisor) > 1
                                      THEN (finish - origin + \(divisor) - 1) / \(divisor) ELSE 1 END AS step
                FROM span WHERE origin IS NOT NULL
            )
            SELECT s.environment, s.stage, (s.at - b.origin) / b.step AS bucket, CAST(count(*) AS bigint) AS devices,
                   b.origin, b.step, b.finish
            FROM stamped s CROSS JOIN bounds b
            GROUP BY s.environment, s.stage, (s.at - b.origin) / b.step, b.origin, b.step, b.finish
            """
    }

    /// One row of `timeline`.
    struct TimelineRow {
        var environment: String
        var stage: String
        var bucket: Int64
        var devices: Int64
        var origin: Int64
        var step: Int64
        var finish: Int64

        init(_ row: some ColumnReader) throws {
            environment = try row.string("environment")
            stage = try row.string("stage")
            bucket = try row.int64("bucket")
            devices = try row.int64("devices")
            origin = try row.int64("origin")
            step = try row.int64("step")
            finish = try row.int64("finish")
        }
    }

    /// `timeline`'s rows as cumulative counts per environment and stage, one per bucket.
    static func timeline(_ rows: [TimelineRow]) throws -> DeliveryFunnelTimeline {
        guard let first = rows.first else { return DeliveryFunnelTimeline(buckets: nil, series: []) }
        let count = Int((first.finish - first.origin) / first.step) + 1
        let buckets = DeliveryFunnelTimeline.Buckets(
            origin: Date(timeIntervalSince1970: Double(first.origin) / 1_000_000),
            stepMicroseconds: first.step,
            until: Date(timeIntervalSince1970: Double(first.finish) / 1_000_000),
            count: count
        )
        var added: [APNSEnvironment: [FunnelStage: [Int64]]] = [:]
        for row in rows {
            let environment = try ColumnCoding.parse(APNSEnvironment.self, row.environment, entity: "funnel timeline")
            let stage = try ColumnCoding.parse(FunnelStage.self, row.stage, entity: "funnel timeline")
            guard (0..<Int64(count)).contains(row.bucket) else {
                throw StoreError.corruptRow(
                    entity: "funnel timeline",
                    detail: "bucket \(row.bucket) outside 0..<\(count)"
                )
            }
            added[environment, default: [:]][stage, default: Array(repeating: 0, count: count)][Int(row.bucket)] +=
                row.devices
        }
        let series = added.map { environment, stages in
            DeliveryFunnelTimeline.Series(
                environment: environment,
                counts: stages.mapValues { perBucket in
                    var total: Int64 = 0
                    return perBucket.map {
                        total += $0
                        return total
                    }
                }
            )
        }
        return DeliveryFunnelTimeline(
            buckets: buckets,
            series: series.sorted { $0.environment.rawValue < $1.environment.rawValue }
        )
    }
}
