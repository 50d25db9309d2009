import Foundation
import MarqueeCore
import PostgresNIO

/// What every fan-out batch commit does around its own rows: a start's deliveries and an activity
/// update's timestamps alike.
extension PostgresStore {
    /// Checks that `owner` still holds the job's lease, and holds the job's row until the commit:
    /// the lock keeps the job from being leased away (or cancelled) until the batch commits or
    /// rolls back.
    func holdLease(appID: AppID, jobID: JobID, owner: String, on connection: PostgresConnection) async throws {
        let held = try await connection.query(
            """
            SELECT id FROM jobs
            WHERE app_id = \(appID.uuid) AND id = \(jobID.uuid) AND state = 'running' AND lease_owner = \(owner)
            FOR UPDATE
            """,
            logger: logger
        ).collect()
        guard !held.isEmpty else { throw StoreError.leaseLost(jobID) }
    }

    /// Adds the batch's counts to the job's progress and moves its checkpoint (a batch without
    /// one keeps the job's).
    func addProgress(
        _ progress: JobProgress,
        retired: Int64 = 0,
        checkpoint: String?,
        jobID: JobID,
        at: Date,
        on connection: PostgresConnection
    ) async throws {
        try await connection.query(
            """
            UPDATE jobs
            SET progress_attempted = progress_attempted + \(progress.attempted),
                progress_succeeded = progress_succeeded + \(progress.succeeded),
                progress_failed = progress_failed + \(progress.failed),
                progress_retired = progress_retired + \(retired),
                progress_downgraded = progress_downgraded + \(progress.downgraded),
                progress_uncertain = progress_uncertain + \(progress.uncertain),
                checkpoint = COALESCE(\(checkpoint), checkpoint),
                updated_at = \(at)
            WHERE id = \(jobID.uuid)
            """,
            logger: logger
        )
    }
}
