import Foundation
import MarqueeCore
import SQLiteNIO

/// What every fan-out batch commit does around its own rows: a start's deliveries and an activity
/// update's timestamps alike. SQLite has one writer, so checking the lease inside the write
/// transaction holds it until the commit.
extension SQLiteStore {
    /// Checks that `owner` still holds the job's lease and that it lasts past `at` (a lapsed lease is
    /// gone even before another worker takes the job). `false` when the job's last applied batch
    /// is `commitID`: this batch was committed before and must change nothing now.
    static func holdLease(
        appID: AppID,
        jobID: JobID,
        owner: String,
        commitID: UUID,
        at: Date,
        on connection: SQLiteConnection
    ) async throws -> Bool {
        let held = try await connection.query(
            """
            SELECT last_commit_id FROM jobs WHERE app_id = ? AND id = ? AND state = 'running' AND lease_owner = ? \
            AND lease_expires_at > ?
            """,
            [.id(appID), .id(jobID), .text(owner), .date(at)]
        )
        guard let row = held.first else { throw StoreError.leaseLost(jobID) }
        return try SQLiteColumns(row, entity: "job").optionalUUID("last_commit_id") != commitID
    }

    /// Adds the batch's counts to the job's progress, moves its checkpoint (a batch without one
    /// keeps the job's) and records the batch as applied.
    static func addProgress(
        _ progress: JobProgress,
        retired: Int64 = 0,
        checkpoint: String?,
        commitID: UUID,
        jobID: JobID,
        at: Date,
        on connection: SQLiteConnection
    ) async throws {
        _ = try await connection.query(
            """
            UPDATE jobs
            SET progress_attempted = progress_attempted + ?, progress_succeeded = progress_succeeded + ?,
                progress_failed = progress_failed + ?, progress_retired = progress_retired + ?,
                progress_downgraded = progress_downgraded + ?, progress_uncertain = progress_uncertain + ?, \
            checkpoint = COALESCE(?, checkpoint),
                last_commit_id = ?, updated_at = ?
            WHERE id = ?
            """,
            [
                .int(progress.attempted), .int(progress.succeeded), .int(progress.failed),
                .int(retired), .int(progress.downgraded), .int(progress.uncertain), .text(checkpoint), .uuid(commitID),
                .date(at), .id(jobID),
            ]
        )
    }
}
