import Foundation
import MarqueeCore
import PostgresNIO

/// A batch's accepted starts written to the start ledger: the statement a fan-out runs most, so it
/// is a named prepared statement (parsed and planned once per connection, not once per batch).
///
/// Two forms of it. `StartLedgerInsert` is a plain insert, which almost every batch is: entries no
/// one wrote before. `StartLedgerUpsert` keeps the first start of an entry already there (the same
/// window committed again, or a token the event's ledger already holds), touched so that it
/// counts; the store runs it only after the plain insert met such an entry (`unique_violation`,
/// under a savepoint). The conflict clause makes PostgreSQL insert every row speculatively (probe
/// the key, insert, confirm, a WAL record more per entry): a third to a half of the insert's
/// time, paid for every entry of every batch to cover an entry that is rarely there.
///
/// The event is found by key with the app alongside and held FOR KEY SHARE, so that its deletion
/// waits for the batch's transaction and then removes what it wrote (deleteEvent). The token row
/// IDs are written as the batch gives them, without a lookup: they come from the job's audience,
/// read within the app, and a token deleted since then leaves an entry nothing reads (token IDs
/// are never reused; every reader of the ledger starts from a token row) that goes with its event.
/// A lookup and lock per token was over a third of the statement's time and held up the batch of
/// a token deleted meanwhile (issue 9). Arrays cannot hold NULL through PostgresNIO's encoders: the
/// nil UUID stands for no apns-id (APNs' are random, version 4), and the apns-ids go as binary
/// uuids, not as text PostgreSQL has to parse.
protocol StartLedgerWrite: PostgresPreparedStatement where Row == Int64 {
    var appID: AppID { get }
    var eventID: EventID { get }
    var jobID: JobID { get }
    var entries: [Delivery] { get }
}

extension StartLedgerWrite {
    /// The statement, with `conflictClause` after the insert: how many entries were written or
    /// touched, which says whether the event was found. One row per batch rather than one per
    /// entry (PostgresNIO fails on a prepared statement's command tag read too early, and a row per
    /// entry was a decode per started token in the server).
    static func statement(conflictClause: String) -> String {
        """
        WITH written AS (
            INSERT INTO start_ledger AS s (event_id, token_id, app_id, job_id, attempt, apns_id, sent_at, started_at)
            SELECT e.id, u.token_id, e.app_id, $3, u.attempt, NULLIF(u.apns_id, '00000000-0000-0000-0000-000000000000'),
                   u.sent_at, u.completed_at
            FROM events e
            CROSS JOIN UNNEST($4::bigint[], $5::bigint[], $6::uuid[], $7::timestamptz[], $8::timestamptz[])
                 AS u(token_id, attempt, apns_id, sent_at, completed_at)
            WHERE e.app_id = $1 AND e.id = $2
            FOR KEY SHARE OF e
            \(conflictClause)
            RETURNING 1
        )
        SELECT count(*) FROM written
        """
    }

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 8)
        bindings.append(appID.uuid)
        bindings.append(eventID.uuid)
        bindings.append(jobID.uuid)
        bindings.append(entries.map(\.tokenRowID))
        bindings.append(entries.map { Int64($0.attempt) })
        bindings.append(entries.map { $0.apnsID ?? Self.noAPNSID })
        bindings.append(entries.map(\.sentAt))
        bindings.append(entries.map(\.completedAt))
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Int64 {
        try row.decode(Int64.self)
    }

    /// What the statement reads as NULL.
    static var noAPNSID: UUID { UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)) }
}

/// Entries no one wrote before (the common case).
struct StartLedgerInsert: StartLedgerWrite {
    typealias Row = Int64

    static let name = "marquee_start_ledger_insert"
    static let sql = statement(conflictClause: "")

    var appID: AppID
    var eventID: EventID
    var jobID: JobID
    var entries: [Delivery]
}

/// Entries some of which may be there already: those keep their first start.
struct StartLedgerUpsert: StartLedgerWrite {
    typealias Row = Int64

    static let name = "marquee_start_ledger_upsert"
    static let sql = statement(
        conflictClause: "ON CONFLICT (event_id, token_id) DO UPDATE SET started_at = s.started_at"
    )

    var appID: AppID
    var eventID: EventID
    var jobID: JobID
    var entries: [Delivery]
}
