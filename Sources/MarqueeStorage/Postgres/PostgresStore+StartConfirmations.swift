import Foundation
import MarqueeCore
import PostgresNIO

extension PostgresStore {
    private static func confirmationPlaceholder(_ index: Int) -> String { "$\(index)" }

    public func unconfirmedStarts(
        appID: AppID,
        eventID: EventID,
        jobID: JobID,
        afterRowID: Int64,
        limit: Int
    ) async throws -> [UnconfirmedStart] {
        var binds = PostgresBindings(capacity: 5)
        binds.append(appID.uuid)
        binds.append(eventID.uuid)
        binds.append(jobID.uuid)
        binds.append(afterRowID)
        binds.append(Int64(max(0, limit)))
        return try await rows(
            PostgresQuery(unsafeSQL: ConfirmationQueries.unconfirmed(Self.confirmationPlaceholder), binds: binds)
        )
        .map { try ConfirmationQueries.unconfirmedStart(PostgresColumns($0, entity: "start confirmation")) }
    }

    public func recordConfirmationSteps(_ steps: ConfirmationSteps, at: Date) async throws -> Int {
        guard !steps.isEmpty else { return 0 }
        return try await transaction { [logger] connection in
            let job = steps.jobID.uuid
            let event = steps.eventID.uuid
            let app = steps.appID.uuid
            let touched = steps.watched + steps.asked + steps.decided.map(\.tokenRowID)
            try await connection.query(
                """
                INSERT INTO start_confirmations (job_id, token_id, event_id, app_id, watched_since)
                SELECT \(job), t.id, \(event), \(app), \(at) FROM push_to_start_tokens t
                WHERE t.app_id = \(app) AND t.id = ANY(\(touched)::bigint[])
                ON CONFLICT (job_id, token_id) DO NOTHING
                """,
                logger: logger
            )
            if !steps.asked.isEmpty {
                try await connection.query(
                    """
                    UPDATE start_confirmations SET asked_at = \(at) WHERE job_id = \(job) AND token_id = \
                    ANY(\(steps.asked)::bigint[])
                    """,
                    logger: logger
                )
            }
            var queued = 0
            for decision in steps.decided {
                var outcome = decision.outcome
                switch outcome {
                case .confirmed:
                    try await connection.query(
                        """
                        INSERT INTO start_ledger (event_id, token_id, app_id, job_id, started_at, sent_at, confirmed_at)
                        VALUES (\(event), \(decision.tokenRowID), \(app), \(job), \(at), \(decision.sentAt), \(at))
                        ON CONFLICT (event_id, token_id) DO NOTHING
                        """,
                        logger: logger
                    )
                case .restarted:
                    let inserted = try await connection.query(
                        """
                        INSERT INTO pending_starts (app_id, event_id, environment, token_id, reason, pending_since, \
                        source_job_id)
                        SELECT \(app), \(event), \(steps.environment.rawValue), \(decision.tokenRowID), \
                        \(PendingStartReason.absent.rawValue), \(at), \(job)
                        WHERE NOT EXISTS (SELECT 1 FROM start_confirmations r
                                          WHERE r.event_id = \(event) AND r.token_id = \(decision.tokenRowID) AND \
                        r.outcome = 'restarted')
                        ON CONFLICT (event_id, token_id) DO UPDATE SET reason = EXCLUDED.reason, source_job_id = \
                        EXCLUDED.source_job_id
                        RETURNING id, pg_notify(\(Self.jobsChannel), \(Self.pendingStartsNotification))
                        """,
                        logger: logger
                    ).collect()
                    if inserted.isEmpty { outcome = .uncertain } else { queued += 1 }
                case .ended, .uncertain:
                    break
                }
                var binds = PostgresBindings(capacity: 4)
                binds.append(job)
                binds.append(decision.tokenRowID)
                binds.append(outcome.rawValue)
                binds.append(at)
                try await connection.query(
                    PostgresQuery(unsafeSQL: ConfirmationQueries.decide(Self.confirmationPlaceholder), binds: binds),
                    logger: logger
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
        var binds = PostgresBindings(capacity: 6)
        binds.append(appID.uuid)
        binds.append(eventID.uuid)
        binds.append(eventID.description)
        binds.append(JobKind.startFanOut.rawValue)
        binds.append(JobKind.startFanOutPartition.rawValue)
        binds.append(tokenRowIDs)
        let sql = """
            SELECT DISTINCT d.token_id FROM deliveries d JOIN jobs j ON j.id = d.job_id
            WHERE d.token_id = ANY($6::bigint[]) AND \
            \(ConfirmationQueries.uncertainOfEvent(Self.confirmationPlaceholder))
            """
        return Set(try await rows(PostgresQuery(unsafeSQL: sql, binds: binds)).map { try $0.decode(Int64.self) })
    }

    public func confirmationCounts(appID: AppID, jobID: JobID) async throws -> ConfirmationCounts {
        var binds = PostgresBindings(capacity: 2)
        binds.append(appID.uuid)
        binds.append(jobID.uuid)
        let result = try await rows(
            PostgresQuery(unsafeSQL: ConfirmationQueries.counts(Self.confirmationPlaceholder), binds: binds)
        )
        return try ConfirmationQueries.counts(result.map { try $0.decode((String, Int64, Int64).self) })
    }
}
