import Foundation
import MarqueeCore
import SQLiteNIO

/// What every fan-out batch commit does around its own rows: a start's deliveries and an activity
/// update's timestamps alike. SQLite has one writer, so checking the lease inside the write
/// transaction holds it until the commit.
extension SQLiteStore {
    /// Checks that `owner` still holds the job's lease.
    static func holdLease(appID: AppID, jobID: JobID, owner: String, on connection: SQLiteConnection) async throws {
        let held = try await connection.query(
            "SELECT id FROM jobs WHERE app_id = ? AND id = ? AND state = 'running' AND lease_owner = ?",
            [.id(appID), .id(jobID), .text(owner)]
        )
        guard !held.isEmpty else { throw StoreError.leaseLost(jobID) }
    }

    /// Adds the batch's counts to the job's progress and moves its checkpoint (a batch without
    /// one keeps the job's).
    static func addProgress(
        _ progress: JobProgress,
        retired: Int64 = 0,
        checkpoint: String?,
        jobID: JobID,
        at: Date,
        on connection: SQLiteConnection
    ) async throws {
        _ = try await connection.query(
            """
            UPDATE jobs
            SET progress_attempted = progress_attempted + ?, progress_succeeded = progress_succeeded + ?,
                progress_failed = progress_failed + ?, progress_retired = progress_retired + ?,
                progress_downgraded = progress_downgraded + ?, progress_uncertain = progress_uncertain + ?, checkpoint = COALESCE(?, checkpoint), updated_at = ?
            WHERE id = ?
            """,
            [
                .int(progress.attempted), .int(progress.succeeded), .int(progress.failed),
                .int(retired), .int(progress.downgraded), .int(progress.uncertain), .text(checkpoint), .date(at), .id(jobID),
            ]
        )
    }
}
