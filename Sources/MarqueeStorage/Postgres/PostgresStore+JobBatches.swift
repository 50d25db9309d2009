import Foundation
import MarqueeCore
import PostgresNIO

/// What every fan-out batch commit does around its own rows: a start's deliveries and an activity
/// update's timestamps alike.
extension PostgresStore {
    /// Checks that `owner` still holds the job's lease and that it lasts past `at` (a lapsed lease is
    /// gone even before another worker takes the job), and holds the job's row until the commit:
    /// the lock keeps the job from being leased away (or cancelled) until the batch commits or
    /// rolls back. `false` when the job's last applied batch is `commitID`: this batch was
    /// committed before (its answer lost) and must change nothing now.
    func holdLease(
        appID: AppID,
        jobID: JobID,
        owner: String,
        commitID: UUID,
        at: Date,
        on connection: PostgresConnection
    ) async throws -> Bool {
        let held = try await connection.rows(
            PreparedQuery<LeaseHoldShape>(Self.leaseHold(appID: appID, jobID: jobID, owner: owner, at: at)),
            logger: logger
        )
        guard let row = held.first else { throw StoreError.leaseLost(jobID) }
        return try row.decode(UUID?.self) != commitID
    }

    static func leaseHold(appID: AppID, jobID: JobID, owner: String, at: Date) -> PostgresQuery {
        """
        SELECT last_commit_id FROM jobs
        WHERE app_id = \(appID.uuid) AND id = \(jobID.uuid) AND state = 'running' AND lease_owner = \(owner)
          AND lease_expires_at > \(at)
        FOR UPDATE
        """
    }

    /// Adds the batch's counts to the job's progress, moves its checkpoint (a batch without one
    /// keeps the job's) and records the batch as applied.
    func addProgress(
        _ progress: JobProgress,
        retired: Int64 = 0,
        checkpoint: String?,
        commitID: UUID,
        jobID: JobID,
        at: Date,
        on connection: PostgresConnection
    ) async throws {
        _ = try await connection.rows(
            PreparedQuery<ProgressAdditionShape>(
                Self.progressAddition(
                    progress,
                    retired: retired,
                    checkpoint: checkpoint,
                    commitID: commitID,
                    jobID: jobID,
                    at: at
                )
            ),
            logger: logger
        )
    }

    static func progressAddition(
        _ progress: JobProgress,
        retired: Int64,
        checkpoint: String?,
        commitID: UUID,
        jobID: JobID,
        at: Date
    ) -> PostgresQuery {
        """
        UPDATE jobs
        SET progress_attempted = progress_attempted + \(progress.attempted),
            progress_succeeded = progress_succeeded + \(progress.succeeded),
            progress_failed = progress_failed + \(progress.failed),
            progress_retired = progress_retired + \(retired),
            progress_downgraded = progress_downgraded + \(progress.downgraded),
            progress_uncertain = progress_uncertain + \(progress.uncertain),
            checkpoint = COALESCE(\(checkpoint)::text, checkpoint),
            last_commit_id = \(commitID),
            updated_at = \(at)
        WHERE id = \(jobID.uuid)
        """
    }
}
