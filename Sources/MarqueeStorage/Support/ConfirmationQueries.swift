import Foundation
import MarqueeCore

/// The statements of start confirmations that read the same in both dialects (parameters `$1` in
/// PostgreSQL, `?1` in SQLite), and their rows' mapping.
enum ConfirmationQueries {
    typealias Placeholder = (Int) -> String

    /// The devices whose start of a job ended uncertain, the event's ledger does not have and the
    /// job's confirmation has not decided. Parameters: 1 app, 2 event, 3 the start job, 4 the token
    /// row to read after, 5 the limit.
    static func unconfirmed(_ p: Placeholder) -> String {
        """
        SELECT d.token_id, t.device_token, max(d.sent_at) AS sent_at,
               pr.state AS presence_state, pr.reported_at AS reported_at, c.watched_since, c.asked_at,
               CAST(CASE WHEN EXISTS (SELECT 1 FROM start_confirmations r
                                      WHERE r.event_id = \(p(2)) AND r.token_id = d.token_id AND r.outcome = \
        'restarted')
                         THEN 1 ELSE 0 END AS bigint) AS restarted
        FROM jobs j
        JOIN deliveries d ON d.job_id = j.id
        JOIN push_to_start_tokens t ON t.id = d.token_id
        LEFT JOIN device_presence pr ON pr.event_id = \(p(2)) AND pr.token_id = d.token_id
        LEFT JOIN start_confirmations c ON c.job_id = \(p(3)) AND c.token_id = d.token_id
        WHERE j.app_id = \(p(1)) AND (j.id = \(p(3)) OR j.parent_id = \(p(3)))
          AND d.outcome = 'uncertain' AND d.token_id > \(p(4)) AND c.outcome IS NULL
          AND NOT EXISTS (SELECT 1 FROM start_ledger s WHERE s.event_id = \(p(2)) AND s.token_id = d.token_id)
        GROUP BY d.token_id, t.device_token, pr.state, pr.reported_at, c.watched_since, c.asked_at
        ORDER BY d.token_id
        LIMIT \(p(5))
        """
    }

    static func unconfirmedStart(_ row: some ColumnReader) throws -> UnconfirmedStart {
        UnconfirmedStart(
            tokenRowID: try row.int64("token_id"),
            deviceToken: try row.optionalString("device_token"),
            sentAt: try row.date("sent_at"),
            presence: try row.optionalString("presence_state").map {
                try ColumnCoding.parse(PresenceState.self, $0, entity: "device presence")
            },
            reportedAt: try row.optionalDate("reported_at"),
            watchedSince: try row.optionalDate("watched_since"),
            askedAt: try row.optionalDate("asked_at"),
            restarted: try row.int64("restarted") == 1
        )
    }

    /// A job's confirmation rows by outcome ('' while waiting). Parameters: 1 app, 2 the start job.
    static func counts(_ p: Placeholder) -> String {
        """
        SELECT COALESCE(outcome, '') AS outcome, CAST(count(*) AS bigint) AS devices, CAST(count(asked_at) AS bigint) \
        AS asked
        FROM start_confirmations WHERE app_id = \(p(1)) AND job_id = \(p(2))
        GROUP BY COALESCE(outcome, '')
        """
    }

    static func counts(_ rows: [(outcome: String, devices: Int64, asked: Int64)]) throws -> ConfirmationCounts {
        var counts = ConfirmationCounts()
        for row in rows {
            counts.watched += row.devices
            counts.asked += row.asked
            if !row.outcome.isEmpty {
                counts.outcomes[
                    try ColumnCoding.parse(ConfirmationOutcome.self, row.outcome, entity: "start confirmation")
                ] = row.devices
            }
        }
        return counts
    }

    /// Devices of the event's start jobs whose start ended uncertain and that its ledger does not
    /// have, as a condition on `d` (deliveries) joined to `j` (jobs). Parameters: 1 app, 2 event, 3
    /// the event as text (as the jobs' arguments carry it), 4 and 5 the start job kinds.
    static func uncertainOfEvent(_ p: Placeholder) -> String {
        """
        j.app_id = \(p(1)) AND j.kind IN (\(p(4)), \(p(5))) AND j.arguments ->> 'eventID' = \(p(3)) AND d.outcome = \
        'uncertain'
        AND NOT EXISTS (SELECT 1 FROM start_ledger s WHERE s.event_id = \(p(2)) AND s.token_id = d.token_id)
        """
    }

    /// The statement that records a device's decision, if it has none. Parameters: 1 the start
    /// job, 2 the token row, 3 the outcome, 4 the time.
    static func decide(_ p: Placeholder) -> String {
        """
        UPDATE start_confirmations SET outcome = \(p(3)), decided_at = \(p(4))
        WHERE job_id = \(p(1)) AND token_id = \(p(2)) AND outcome IS NULL
        """
    }
}
