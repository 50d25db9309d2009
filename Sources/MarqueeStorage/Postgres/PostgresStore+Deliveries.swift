import Foundation
import MarqueeCore
import PostgresNIO

extension PostgresStore {
    public func commitDeliveryBatch(_ batch: DeliveryBatch, at: Date) async throws {
        try await transaction { connection in
            // A batch already applied (its answer lost, then sent again) changes nothing.
            guard
                try await holdLease(
                    appID: batch.appID,
                    jobID: batch.jobID,
                    owner: batch.leaseOwner,
                    commitID: batch.commitID,
                    at: at,
                    on: connection
                )
            else {
                return
            }

            let started = batch.ledgerEntries
            if batch.startedEventID != nil, !started.isEmpty {
                // Ordered against a merge of token rows (PostgresStore.mergeLockKey): before the
                // deliveries below hold any token row.
                try await Self.holdMergeLockShared(appID: batch.appID, on: connection, logger: logger)
            }
            try await insertDeliveries(of: batch, on: connection)
            if let eventID = batch.startedEventID, !started.isEmpty {
                try await recordStarts(started, of: eventID, in: batch, at: at, on: connection)
            }
            try await insertStartingActivities(of: batch, at: at, on: connection)
            let retired = try await retireInvalidated(batch.invalidations, appID: batch.appID, on: connection)
            try await addProgress(
                batch.progress,
                retired: retired,
                checkpoint: batch.checkpoint,
                commitID: batch.commitID,
                jobID: batch.jobID,
                at: at,
                on: connection
            )
        }
    }

    /// The batch's final outcomes other than accepted starts. Each token is looked up by its key with
    /// the app alongside (a LATERAL subquery with a LIMIT, which PostgreSQL does not flatten into a
    /// join): a token of another app, or one deleted since the audience was read (its rows would
    /// have gone with it), is not written, and the rest of the batch commits, so the job does not
    /// send its window again. A plain join let the planner hash the app's whole token table when its
    /// statistics were stale (right after a bulk load), which cost more than the rest of the fan-out.
    private func insertDeliveries(of batch: DeliveryBatch, on connection: PostgresConnection) async throws {
        let recorded = batch.recordedDeliveries
        guard !recorded.isEmpty else { return }
        // A conflicting row (the same window committed again) is kept as it was. Arrays
        // cannot hold NULL through PostgresNIO's encoders: -1 and '' stand for none.
        try await connection.query(
            """
            INSERT INTO deliveries AS d (app_id, job_id, token_id, attempt, outcome, status, apns_id, reason,
                                         sent_at, completed_at)
            SELECT t.app_id, \(batch.jobID.uuid), t.id, u.attempt, u.outcome, NULLIF(u.status, -1),
                   NULLIF(u.apns_id, '')::uuid, NULLIF(u.reason, ''), u.sent_at, u.completed_at
            FROM UNNEST(\(recorded.map(\.tokenRowID))::bigint[], \(recorded.map(\.attempt))::bigint[],
                        \(recorded.map(\.outcome.rawValue))::text[],
                        \(recorded.map { $0.status ?? -1 })::bigint[],
                        \(recorded.map { $0.apnsID?.uuidString ?? "" })::text[],
                        \(recorded.map { $0.reason?.reasonString ?? "" })::text[],
                        \(recorded.map(\.sentAt))::timestamptz[],
                        \(recorded.map(\.completedAt))::timestamptz[])
                 AS u(token_id, attempt, outcome, status, apns_id, reason, sent_at, completed_at)
            CROSS JOIN LATERAL (SELECT t.app_id, t.id FROM push_to_start_tokens t
                                WHERE t.id = u.token_id AND t.app_id = \(batch.appID.uuid) LIMIT 1) t
            ON CONFLICT (job_id, token_id, attempt) DO NOTHING
            """,
            logger: logger
        )
    }

    /// The accepted starts in the event's ledger (moved to the surviving row of a merged device),
    /// and the event live with its first.
    private func recordStarts(
        _ started: [Delivery],
        of eventID: EventID,
        in batch: DeliveryBatch,
        at: Date,
        on connection: PostgresConnection
    ) async throws {
        let written = try await writeLedgerEntries(started, of: eventID, in: batch, on: connection)
        if written != started.count {
            throw StoreError.notFound(entity: "event", id: "\(eventID)")
        }
        try await Self.rehomeMergedLedgerEntries(
            appID: batch.appID,
            eventID: eventID,
            tokenRowIDs: started.map(\.tokenRowID),
            on: connection,
            logger: logger
        )
        // The first accepted start makes the event live. One conditional statement per batch
        // that started someone: once live, the row is matched and not written again.
        _ = try await connection.rows(
            PreparedQuery<EventLiveShape>(Self.eventLive(appID: batch.appID, eventID: eventID, at: at)),
            logger: logger
        )
    }

    static func eventLive(appID: AppID, eventID: EventID, at: Date) -> PostgresQuery {
        """
        UPDATE events SET state = 'live', updated_at = \(at)
        WHERE app_id = \(appID.uuid) AND id = \(eventID.uuid) AND state = 'scheduled'
        """
    }

    /// The entries as a plain insert, and through the conflict clause only if one of them is there
    /// already (StartLedgerWrite): the savepoint undoes the failed insert alone, not the batch.
    private func writeLedgerEntries(
        _ started: [Delivery],
        of eventID: EventID,
        in batch: DeliveryBatch,
        on connection: PostgresConnection
    ) async throws -> Int64 {
        try await connection.query("SAVEPOINT start_ledger", logger: logger)
        do {
            let insert = StartLedgerInsert(appID: batch.appID, eventID: eventID, jobID: batch.jobID, entries: started)
            let written = try await Self.count(insert, on: connection, logger: logger)
            try await connection.query("RELEASE SAVEPOINT start_ledger", logger: logger)
            return written
        } catch let error as PSQLError where error.isUniqueViolation {
            try await connection.query("ROLLBACK TO SAVEPOINT start_ledger", logger: logger)
            let upsert = StartLedgerUpsert(appID: batch.appID, eventID: eventID, jobID: batch.jobID, entries: started)
            return try await Self.count(upsert, on: connection, logger: logger)
        }
    }

    private static func count(
        _ write: some StartLedgerWrite,
        on connection: PostgresConnection,
        logger: Logger
    ) async throws -> Int64 {
        var written: Int64 = 0
        for try await count in try await connection.execute(write, logger: logger) { written = count }
        return written
    }

    /// The activities the batch's accepted starts began, `starting` until their update tokens arrive.
    /// Their IDs are time-ordered, so that a batch's rows go to one end of the primary key
    /// (`UUID.timeOrdered(at:)`).
    private func insertStartingActivities(
        of batch: DeliveryBatch,
        at: Date,
        on connection: PostgresConnection
    ) async throws {
        guard let eventID = batch.startedEventID, let starting = batch.startingActivities,
            !starting.pushToStartTokenRowIDs.isEmpty
        else { return }
        let rowIDs = starting.pushToStartTokenRowIDs
        try await connection.query(
            """
            INSERT INTO activities (id, app_id, event_id, environment, push_to_start_token_id, state,
                                    last_timestamp_sent, frequent_pushes_enabled, created_at, updated_at)
            SELECT u.id, e.app_id, e.id, \(starting.environment.rawValue), t.id, \(ActivityState.starting.rawValue),
                   \(starting.lastTimestampSent), t.frequent_pushes_enabled, \(at), \(at)
            FROM events e
            CROSS JOIN UNNEST(\(rowIDs.map { _ in UUID.timeOrdered(at: at) })::uuid[], \(rowIDs)::bigint[]) AS u(id, token_id)
            CROSS JOIN LATERAL (SELECT t.id, t.frequent_pushes_enabled FROM push_to_start_tokens t
                                WHERE t.id = u.token_id AND t.app_id = e.app_id LIMIT 1) t
            WHERE e.app_id = \(batch.appID.uuid) AND e.id = \(eventID.uuid)
            """,
            logger: logger
        )
    }

    /// The tokens APNs retired in the batch, by the timestamp rule; how many were.
    private func retireInvalidated(
        _ invalidations: [Int64: TokenInvalidation],
        appID: AppID,
        on connection: PostgresConnection
    ) async throws -> Int64 {
        var retired: Int64 = 0
        for (rowID, invalidation) in invalidations.sorted(by: { $0.key < $1.key }) {
            let rows = try await connection.query(
                Self.invalidation(appID: appID, rowID: rowID, invalidation),
                logger: logger
            ).collect()
            retired += Int64(rows.count)
        }
        return retired
    }

    public func deliveries(appID: AppID, jobID: JobID) async throws -> [Delivery] {
        try await rows(
            """
            SELECT \(unescaped: RowMapping.deliveryColumns) FROM deliveries
            WHERE app_id = \(appID.uuid) AND job_id = \(jobID.uuid) ORDER BY token_id, attempt
            """
        ).mapped(RowMapping.delivery)
    }

    public func deliveryCounts(appID: AppID, jobIDs: [JobID]) async throws -> [DeliveryCount] {
        guard !jobIDs.isEmpty else { return [] }
        var counts: [DeliveryCount] = []
        let result = try await rows(
            """
            SELECT outcome, COALESCE(reason, ''), count(*) FROM deliveries
            WHERE app_id = \(appID.uuid) AND job_id = ANY(\(jobIDs.map(\.uuid))::uuid[])
            GROUP BY outcome, COALESCE(reason, '') ORDER BY outcome, COALESCE(reason, '')
            """
        )
        for row in result {
            let (outcome, reason, count) = try row.decode((String, String, Int64).self)
            guard let outcome = DeliveryOutcome(rawValue: outcome) else {
                throw StoreError.corruptRow(entity: "delivery", detail: "unknown outcome \(outcome)")
            }
            counts.append(
                DeliveryCount(
                    outcome: outcome,
                    reason: reason.isEmpty ? nil : APNSErrorReason(reasonString: reason),
                    count: count
                )
            )
        }
        return counts
    }

    public func startRecords(appID: AppID, eventID: EventID, among tokenRowIDs: [Int64]) async throws -> [StartRecord] {
        guard !tokenRowIDs.isEmpty else { return [] }
        return try await rows(
            """
            SELECT \(unescaped: RowMapping.startRecordColumns) FROM start_ledger
            WHERE app_id = \(appID.uuid) AND event_id = \(eventID.uuid) AND token_id = ANY(\(tokenRowIDs))
            ORDER BY token_id
            """
        ).mapped(RowMapping.startRecord)
    }
}
