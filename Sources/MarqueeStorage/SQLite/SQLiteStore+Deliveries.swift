import Foundation
import MarqueeCore
import SQLiteNIO

extension SQLiteStore {
    public func commitDeliveryBatch(_ batch: DeliveryBatch, at: Date) async throws {
        try await write { connection in
            // A batch already applied (its answer lost, then sent again) changes nothing.
            guard
                try await Self.holdLease(
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

            try await Self.insertDeliveries(of: batch, on: connection)
            if let eventID = batch.startedEventID, !batch.ledgerEntries.isEmpty {
                try await Self.recordStarts(batch.ledgerEntries, of: eventID, in: batch, at: at, on: connection)
            }
            try await Self.insertStartingActivities(of: batch, at: at, on: connection)
            let retired = try await Self.retireInvalidated(batch.invalidations, appID: batch.appID, on: connection)
            try await Self.addProgress(
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

    /// The batch's final outcomes other than accepted starts, each for a token of the batch's app
    /// that still exists.
    private static func insertDeliveries(of batch: DeliveryBatch, on connection: SQLiteConnection) async throws {
        // A token of another app, or one deleted since the audience was read (its rows would
        // have gone with it), is not written, and the rest of the batch commits, so the job does
        // not send its window again.
        for delivery in batch.recordedDeliveries {
            _ = try await connection.query(
                """
                INSERT INTO deliveries (app_id, job_id, token_id, attempt, outcome, status, apns_id, reason, sent_at,
                                        completed_at)
                SELECT t.app_id, ?, t.id, ?, ?, ?, ?, ?, ?, ? FROM push_to_start_tokens t WHERE t.app_id = ? AND t.id \
                = ?
                ON CONFLICT (job_id, token_id, attempt) DO NOTHING
                """,
                [
                    .id(batch.jobID), .int(delivery.attempt), .text(delivery.outcome.rawValue), .int(delivery.status),
                    .uuid(delivery.apnsID), .text(delivery.reason?.reasonString), .date(delivery.sentAt),
                    .date(delivery.completedAt), .id(batch.appID), .int(delivery.tokenRowID),
                ]
            )
        }
    }

    /// The accepted starts in the event's ledger, and the event live with its first.
    private static func recordStarts(
        _ started: [Delivery],
        of eventID: EventID,
        in batch: DeliveryBatch,
        at: Date,
        on connection: SQLiteConnection
    ) async throws {
        // The event must be the app's: a batch for another app's event is refused whole.
        let event = try await connection.query(
            "SELECT 1 FROM events WHERE app_id = ? AND id = ?",
            [.id(batch.appID), .id(eventID)]
        )
        guard !event.isEmpty else { throw StoreError.notFound(entity: "event", id: "\(eventID)") }
        for start in started {
            // The ledger keeps the first start: a conflicting entry (the same window committed
            // again) is left as it was. Tokens are as above: the app's, still there; a row
            // merged into its device's row since the audience was read is that row (the
            // device has the activity: its next start must not send it again), and where the
            // device's row has its own entry, that one is kept.
            _ = try await connection.query(
                """
                INSERT INTO start_ledger (event_id, token_id, app_id, job_id, attempt, apns_id, sent_at, started_at)
                SELECT ?1, t.id, t.app_id, ?2, ?3, ?4, ?5, ?6 FROM push_to_start_tokens t
                WHERE t.app_id = ?7 AND t.id = COALESCE((SELECT into_id FROM merged_token_rows WHERE from_id = ?8), ?8)
                ON CONFLICT (event_id, token_id) DO NOTHING
                """,
                [
                    .id(eventID), .id(batch.jobID), .int(start.attempt), .uuid(start.apnsID), .date(start.sentAt),
                    .date(start.completedAt), .id(batch.appID), .int(start.tokenRowID),
                ]
            )
        }
        // The first accepted start makes the event live. One conditional statement per batch
        // that started someone: once live, the row is matched and not written again.
        _ = try await connection.query(
            "UPDATE events SET state = 'live', updated_at = ? WHERE app_id = ? AND id = ? AND state = 'scheduled'",
            [.date(at), .id(batch.appID), .id(eventID)]
        )
    }

    /// The activities the batch's accepted starts began, `starting` until their update tokens arrive.
    private static func insertStartingActivities(
        of batch: DeliveryBatch,
        at: Date,
        on connection: SQLiteConnection
    ) async throws {
        guard let eventID = batch.startedEventID, let starting = batch.startingActivities else { return }
        for rowID in starting.pushToStartTokenRowIDs {
            _ = try await connection.query(
                """
                INSERT INTO activities (id, app_id, event_id, environment, push_to_start_token_id, state,
                                        last_timestamp_sent, frequent_pushes_enabled, created_at, updated_at)
                SELECT ?, e.app_id, e.id, ?, t.id, ?, ?, t.frequent_pushes_enabled, ?, ?
                FROM events e JOIN push_to_start_tokens t ON t.app_id = e.app_id AND t.id = ?
                WHERE e.app_id = ? AND e.id = ?
                """,
                [
                    .id(ActivityRecordID(timeOrderedAt: at)), .text(starting.environment.rawValue),
                    .text(ActivityState.starting.rawValue),
                    .int(starting.lastTimestampSent), .date(at), .date(at), .int(rowID), .id(batch.appID), .id(eventID),
                ]
            )
        }
    }

    /// The tokens APNs retired in the batch, by the timestamp rule; how many were.
    private static func retireInvalidated(
        _ invalidations: [Int64: TokenInvalidation],
        appID: AppID,
        on connection: SQLiteConnection
    ) async throws -> Int64 {
        var retired: Int64 = 0
        for (rowID, invalidation) in invalidations.sorted(by: { $0.key < $1.key }) {
            if try await Self.invalidate(on: connection, appID: appID, rowID: rowID, invalidation) { retired += 1 }
        }
        return retired
    }

    public func deliveries(appID: AppID, jobID: JobID) async throws -> [Delivery] {
        try await query(
            """
            SELECT \(RowMapping.deliveryColumns) FROM deliveries WHERE app_id = ? AND job_id = ? ORDER BY \
            token_id, attempt
            """,
            [.id(appID), .id(jobID)]
        ).mapped(RowMapping.delivery)
    }

    public func deliveryCounts(appID: AppID, jobIDs: [JobID]) async throws -> [DeliveryCount] {
        guard !jobIDs.isEmpty else { return [] }
        let rows = try await query(
            """
            SELECT outcome, COALESCE(reason, '') AS reason, count(*) AS count FROM deliveries
            WHERE app_id = ? AND job_id IN (SELECT value FROM json_each(?))
            GROUP BY outcome, COALESCE(reason, '') ORDER BY outcome, COALESCE(reason, '')
            """,
            [.id(appID), .jsonList(jobIDs)]
        )
        return try rows.map { row in
            let columns = SQLiteColumns(row, entity: "delivery")
            let outcome = try columns.parse("outcome", as: DeliveryOutcome.self)
            let reason = try columns.string("reason")
            return DeliveryCount(
                outcome: outcome,
                reason: reason.isEmpty ? nil : APNSErrorReason(reasonString: reason),
                count: try columns.int64("count")
            )
        }
    }

    public func startRecords(appID: AppID, eventID: EventID, among tokenRowIDs: [Int64]) async throws -> [StartRecord] {
        guard !tokenRowIDs.isEmpty else { return [] }
        // json_each takes the whole list as one parameter, whatever its length.
        return try await query(
            """
            SELECT \(RowMapping.startRecordColumns) FROM start_ledger
            WHERE app_id = ? AND event_id = ? AND token_id IN (SELECT value FROM json_each(?))
            ORDER BY token_id
            """,
            [.id(appID), .id(eventID), .jsonList(tokenRowIDs)]
        ).mapped(RowMapping.startRecord)
    }
}
