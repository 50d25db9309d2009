import Foundation
import MarqueeCore
import PostgresNIO

/// The statements a fan-out runs at every batch commit and every reservation, prepared
/// (`PreparedQueryShape`): a 1,000,000-token start runs each about 2,000 times (the reservation
/// 3,000), and PostgreSQL parsed and planned each call of them, 1.0 s of planning per million
/// tokens by `pg_stat_statements` (`track_planning`), about a tenth of its CPU in that fan-out
/// (BENCHMARKS.md, the start fan-out). The audience's page and the ledger's insert are not here:
/// the page is planned for each call's filters on purpose (`PostgresStore.audience`), the insert
/// has its own statement (`StartLedgerWrite`).

/// `PostgresStore.leaseHold`.
enum LeaseHoldShape: PreparedQueryShape {
    static let name = "marquee_hold_job_lease"
    static let sql = PostgresStore.leaseHold(
        appID: AppID(),
        jobID: JobID(),
        owner: "",
        at: Date(timeIntervalSince1970: 0)
    ).sql
}

/// `PostgresStore.progressAddition`.
enum ProgressAdditionShape: PreparedQueryShape {
    static let name = "marquee_add_job_progress"
    static let sql = PostgresStore.progressAddition(
        JobProgress(),
        retired: 0,
        checkpoint: nil,
        commitID: UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)),
        jobID: JobID(),
        at: Date(timeIntervalSince1970: 0)
    ).sql
}

/// `PostgresStore.reservation`.
enum ReservationShape: PreparedQueryShape {
    static let name = "marquee_reserve_job_tokens"
    static let sql = PostgresStore.reservation(
        id: JobID(),
        owner: "",
        through: nil,
        at: Date(timeIntervalSince1970: 0)
    ).sql
}

/// `PostgresStore.eventLive`.
enum EventLiveShape: PreparedQueryShape {
    static let name = "marquee_event_live"
    static let sql = PostgresStore.eventLive(appID: AppID(), eventID: EventID(), at: Date(timeIntervalSince1970: 0)).sql
}

/// `PostgresStore.mergeLockShared`.
enum MergeLockSharedShape: PreparedQueryShape {
    static let name = "marquee_hold_merge_lock_shared"
    static let sql = PostgresStore.mergeLockShared(AppID()).sql
}

/// `PostgresStore.mergedTokenRows`.
enum MergedTokenRowsShape: PreparedQueryShape {
    static let name = "marquee_find_merged_token_rows"
    static let sql = PostgresStore.mergedTokenRows(appID: AppID(), among: []).sql
}
