import Foundation
import MarqueeCore
import PostgresNIO

extension PostgresStore {
    public func commitDeliveryBatch(_ batch: DeliveryBatch, at: Date) async throws {
        try await transaction { connection in
            try await holdLease(appID: batch.appID, jobID: batch.jobID, owner: batch.leaseOwner, on: connection)

            // One statement may not touch a row twice: a (token, attempt) repeated in the batch keeps its first outcome.
            var seen: Set<DeliveryKey> = []
            let deliveries = batch.deliveries.filter { seen.insert(DeliveryKey(token: $0.tokenRowID, attempt: $0.attempt)).inserted }
            let tokenIDs = deliveries.map(\.tokenRowID)
            if !tokenIDs.isEmpty {
                // Joined with the app's tokens, so a row of another app (or a deleted token) is not
                // written; the count tells, and the transaction is rolled back. A conflicting row
                // (the same window committed again) is touched, not duplicated, so it still counts.
                // Arrays cannot hold NULL through PostgresNIO's encoders: -1 and '' stand for none.
                let written = try await connection.query(
                    """
                    INSERT INTO deliveries AS d (app_id, job_id, token_id, attempt, outcome, status, apns_id, reason,
                                                 sent_at, completed_at)
                    SELECT t.app_id, \(batch.jobID.uuid), t.id, u.attempt, u.outcome, NULLIF(u.status, -1),
                           NULLIF(u.apns_id, '')::uuid, NULLIF(u.reason, ''), u.sent_at, u.completed_at
                    FROM UNNEST(\(tokenIDs)::bigint[], \(deliveries.map(\.attempt))::bigint[],
                                \(deliveries.map(\.outcome.rawValue))::text[],
                                \(deliveries.map { $0.status ?? -1 })::bigint[],
                                \(deliveries.map { $0.apnsID?.uuidString ?? "" })::text[],
                                \(deliveries.map { $0.reason?.reasonString ?? "" })::text[],
                                \(deliveries.map(\.sentAt))::timestamptz[],
                                \(deliveries.map(\.completedAt))::timestamptz[])
                         AS u(token_id, attempt, outcome, status, apns_id, reason, sent_at, completed_at)
                    JOIN push_to_start_tokens t ON t.id = u.token_id AND t.app_id = \(batch.appID.uuid)
                    ON CONFLICT (job_id, token_id, attempt) DO UPDATE SET outcome = d.outcome
                    RETURNING d.id
                    """,
                    logger: logger
                ).collect()
                if written.count != deliveries.count {
                    throw StoreError.notFound(entity: "push-to-start token", id: "\(tokenIDs.count - written.count) of the batch")
                }
            }

            if let eventID = batch.startedEventID {
                let started = batch.deliveries.filter { $0.outcome == .accepted }.map(\.tokenRowID)
                if !started.isEmpty {
                    try await connection.query(
                        """
                        INSERT INTO start_ledger (event_id, token_id, app_id, job_id, started_at)
                        SELECT e.id, u.token_id, e.app_id, \(batch.jobID.uuid), \(at)
                        FROM events e, UNNEST(\(started)::bigint[]) AS u(token_id)
                        WHERE e.app_id = \(batch.appID.uuid) AND e.id = \(eventID.uuid)
                        ON CONFLICT (event_id, token_id) DO NOTHING
                        """,
                        logger: logger
                    )
                }
            }

            if let eventID = batch.startedEventID, let starting = batch.startingActivities, !starting.pushToStartTokenRowIDs.isEmpty {
                let rowIDs = starting.pushToStartTokenRowIDs
                try await connection.query(
                    """
                    INSERT INTO activities (id, app_id, event_id, environment, push_to_start_token_id, state,
                                            last_timestamp_sent, frequent_pushes_enabled, created_at, updated_at)
                    SELECT u.id, e.app_id, e.id, \(starting.environment.rawValue), t.id, \(ActivityState.starting.rawValue),
                           \(starting.lastTimestampSent), t.frequent_pushes_enabled, \(at), \(at)
                    FROM events e,
                         UNNEST(\(rowIDs.map { _ in UUID() })::uuid[], \(rowIDs)::bigint[]) AS u(id, token_id)
                         JOIN push_to_start_tokens t ON t.id = u.token_id AND t.app_id = \(batch.appID.uuid)
                    WHERE e.app_id = \(batch.appID.uuid) AND e.id = \(eventID.uuid)
                    """,
                    logger: logger
                )
            }

            var retired: Int64 = 0
            for (rowID, invalidation) in batch.invalidations.sorted(by: { $0.key < $1.key }) {
                let rows = try await connection.query(
                    Self.invalidation(appID: batch.appID, rowID: rowID, invalidation),
                    logger: logger
                ).collect()
                retired += Int64(rows.count)
            }

            try await addProgress(batch.progress, retired: retired, checkpoint: batch.checkpoint, jobID: batch.jobID, at: at, on: connection)
        }
    }

    public func deliveries(appID: AppID, jobID: JobID) async throws -> [Delivery] {
        try await rows(
            """
            SELECT \(unescaped: RowMapping.deliveryColumns) FROM deliveries
            WHERE app_id = \(appID.uuid) AND job_id = \(jobID.uuid) ORDER BY id
            """
        ).mapped(RowMapping.delivery)
    }

    public func deliveryCounts(appID: AppID, jobID: JobID) async throws -> [DeliveryCount] {
        var counts: [DeliveryCount] = []
        let result = try await client.query(
            """
            SELECT outcome, COALESCE(reason, ''), count(*) FROM deliveries
            WHERE app_id = \(appID.uuid) AND job_id = \(jobID.uuid)
            GROUP BY outcome, COALESCE(reason, '') ORDER BY outcome, COALESCE(reason, '')
            """,
            logger: logger
        )
        for try await (outcome, reason, count) in result.decode((String, String, Int64).self) {
            guard let outcome = DeliveryOutcome(rawValue: outcome) else {
                throw StoreError.corruptRow(entity: "delivery", detail: "unknown outcome \(outcome)")
            }
            counts.append(DeliveryCount(outcome: outcome, reason: reason.isEmpty ? nil : APNSErrorReason(reasonString: reason), count: count))
        }
        return counts
    }

    public func startedTokens(appID: AppID, eventID: EventID, among tokenRowIDs: [Int64]) async throws -> Set<Int64> {
        guard !tokenRowIDs.isEmpty else { return [] }
        var started: Set<Int64> = []
        let result = try await client.query(
            """
            SELECT token_id FROM start_ledger
            WHERE app_id = \(appID.uuid) AND event_id = \(eventID.uuid) AND token_id = ANY(\(tokenRowIDs))
            """,
            logger: logger
        )
        for try await tokenID in result.decode(Int64.self) { started.insert(tokenID) }
        return started
    }
}

/// A delivery's unique key within a job.
private struct DeliveryKey: Hashable {
    var token: Int64
    var attempt: Int
}
