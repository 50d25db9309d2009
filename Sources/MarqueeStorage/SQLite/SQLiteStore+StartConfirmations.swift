import Foundation
import MarqueeCore
import SQLiteNIO

extension SQLiteStore {
    private static func confirmationPlaceholder(_ index: Int) -> String { "?\(index)" }

    public func unconfirmedStarts(
        appID: AppID,
        eventID: EventID,
        jobID: JobID,
        afterRowID: Int64,
        limit: Int
    ) async throws -> [UnconfirmedStart] {
        try await query(
            ConfirmationQueries.unconfirmed(Self.confirmationPlaceholder),
            [.id(appID), .id(eventID), .id(jobID), .int(afterRowID), .int(max(0, limit))]
        ).map { try ConfirmationQueries.unconfirmedStart(SQLiteColumns($0, entity: "start confirmation")) }
    }

    public func recordConfirmationSteps(_ steps: ConfirmationSteps, at: Date) async throws -> Int {
        guard !steps.isEmpty else { return 0 }
        return try await write { connection in
            let touched = steps.watched + steps.asked + steps.decided.map(\.tokenRowID)
            _ = try await connection.query(
                """
                INSERT INTO start_confirmations (job_id, token_id, event_id, app_id, watched_since)
                SELECT ?1, t.id, ?2, ?3, ?4 FROM push_to_start_tokens t
                WHERE t.app_id = ?3 AND t.id IN (SELECT value FROM json_each(?5))
                ON CONFLICT (job_id, token_id) DO NOTHING
                """,
                [.id(steps.jobID), .id(steps.eventID), .id(steps.appID), .date(at), .jsonList(touched)]
            )
            if !steps.asked.isEmpty {
                _ = try await connection.query(
                    """
                    UPDATE start_confirmations SET asked_at = ?1 WHERE job_id = ?2 AND token_id IN (SELECT value \
                    FROM json_each(?3))
                    """,
                    [.date(at), .id(steps.jobID), .jsonList(steps.asked)]
                )
            }
            var queued = 0
            for decision in steps.decided {
                var outcome = decision.outcome
                switch outcome {
                case .confirmed:
                    _ = try await connection.query(
                        """
                        INSERT INTO start_ledger (event_id, token_id, app_id, job_id, started_at, sent_at, confirmed_at)
                        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?5)
                        ON CONFLICT (event_id, token_id) DO NOTHING
                        """,
                        [
                            .id(steps.eventID), .int(decision.tokenRowID), .id(steps.appID), .id(steps.jobID),
                            .date(at), .date(decision.sentAt),
                        ]
                    )
                case .restarted:
                    let inserted = try await connection.query(
                        """
                        INSERT INTO pending_starts (app_id, event_id, environment, token_id, reason, pending_since, \
                        source_job_id)
                        SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7
                        WHERE NOT EXISTS (SELECT 1 FROM start_confirmations r WHERE r.event_id = ?2 AND r.token_id = \
                        ?4 AND r.outcome = 'restarted')
                        ON CONFLICT (event_id, token_id) DO UPDATE SET reason = excluded.reason, source_job_id = \
                        excluded.source_job_id
                        RETURNING id
                        """,
                        [
                            .id(steps.appID), .id(steps.eventID), .text(steps.environment.rawValue),
                            .int(decision.tokenRowID),
                            .text(PendingStartReason.absent.rawValue), .date(at), .id(steps.jobID),
                        ]
                    )
                    if inserted.isEmpty { outcome = .uncertain } else { queued += 1 }
                case .ended, .uncertain:
                    break
                }
                _ = try await connection.query(
                    ConfirmationQueries.decide(Self.confirmationPlaceholder),
                    [.id(steps.jobID), .int(decision.tokenRowID), .text(outcome.rawValue), .date(at)]
                )
            }
            return queued
        }
    }

    public func uncertainStartTokens(
        appID: AppID,
        eventID: EventID,
        among tokenRowIDs: [Int64]
    ) async throws -> Set<Int64> {
        guard !tokenRowIDs.isEmpty else { return [] }
        let rows = try await query(
            """
            SELECT DISTINCT d.token_id FROM deliveries d JOIN jobs j ON j.id = d.job_id
            WHERE d.token_id IN (SELECT value FROM json_each(?6)) AND \
            \(ConfirmationQueries.uncertainOfEvent(Self.confirmationPlaceholder))
            """,
            [
                .id(appID), .id(eventID), .text(eventID.description), .text(JobKind.startFanOut.rawValue),
                .text(JobKind.startFanOutPartition.rawValue), .jsonList(tokenRowIDs),
            ]
        )
        return Set(try rows.map { try SQLiteColumns($0, entity: "delivery").int64("token_id") })
    }

    public func confirmationCounts(appID: AppID, jobID: JobID) async throws -> ConfirmationCounts {
        let rows = try await query(ConfirmationQueries.counts(Self.confirmationPlaceholder), [.id(appID), .id(jobID)])
        return try ConfirmationQueries.counts(
            rows.map { row in
                let columns = SQLiteColumns(row, entity: "start confirmation")
                return (try columns.string("outcome"), try columns.int64("devices"), try columns.int64("asked"))
            }
        )
    }
}
