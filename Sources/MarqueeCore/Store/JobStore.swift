import Foundation

/// The job queue shared by every replica.
public protocol JobStore: Sendable {
    func enqueueJob(_ job: Job) async throws
    /// Enqueues the jobs together or none of them (a fan-out and its partitions).
    func enqueueJobs(_ jobs: [Job]) async throws
    /// The jobs that do parts of `parentID`, oldest first.
    func childJobs(appID: AppID, parentID: JobID) async throws -> [Job]
    /// Marks a parent job finished once none of its children is pending or running: `failed` if
    /// one failed, `succeeded` otherwise. Returns the state it set, `nil` if it changed nothing
    /// (children still at work, or the parent already finished). Safe to call from every replica.
    func finishParentJob(id: JobID, at: Date) async throws -> JobState?
    func job(appID: AppID, id: JobID) async throws -> Job?

    /// Leases up to `limit` jobs that are due (`pending` with `dueAt <= now`, or `running` with an
    /// expired lease), oldest due first, for `owner` until `now + leaseDuration`. Workers serve
    /// every app, so this is the one job operation not scoped by app. Concurrent callers never
    /// receive the same job.
    func leaseJobs(
        owner: String,
        kinds: Set<JobKind>?,
        now: Date,
        leaseDuration: Duration,
        limit: Int
    ) async throws -> [Job]

    /// Extends the lease to `now + leaseDuration`; false if `owner` lost it: the job was cancelled,
    /// another worker holds it, or the lease had expired by `now` (a lapsed lease is gone, even if
    /// nobody has taken the job yet).
    func renewJobLease(id: JobID, owner: String, now: Date, leaseDuration: Duration) async throws -> Bool
    /// Records that `owner` has handed out the job's tokens through row `tokenRowID` (`Job.reservedThrough`),
    /// before it hands them to APNs; `nil` clears it (every send the run made has a committed outcome,
    /// or never left). `StoreError.leaseLost` if `owner` does not hold a lease that lasts past `at`.
    func reserveJobTokens(id: JobID, owner: String, through tokenRowID: Int64?, at: Date) async throws
    /// Marks the job `succeeded`; `StoreError.leaseLost` if `owner` lost it.
    func completeJob(id: JobID, owner: String, at: Date) async throws
    /// Records the failure; with `retryAt` the job becomes `pending` again, otherwise `failed`.
    /// `StoreError.leaseLost` if `owner` lost it.
    func failJob(id: JobID, owner: String, error: String, retryAt: Date?, at: Date) async throws
    /// The app's jobs of `kinds` (every kind when `nil`; never a parent's children), newest first by (`createdAt`,
    /// `id`), those
    /// strictly before `before` when given (keyset pagination), at most `limit`.
    func jobs(appID: AppID, kinds: Set<JobKind>?, before: JobListPosition?, limit: Int) async throws -> [Job]

    /// Cancels a job that has not finished, and its children that have not; false if the job had
    /// finished. A parent whose children have all finished counts as finished even before
    /// `finishParentJob` writes its row: it is left for that.
    func cancelJob(appID: AppID, id: JobID, at: Date) async throws -> Bool
}

/// A position in an app's job list (newest first): the (`createdAt`, `id`) of the last job seen.
public struct JobListPosition: Sendable, Hashable {
    public var createdAt: Date
    public var id: JobID

    public init(createdAt: Date, id: JobID) {
        self.createdAt = createdAt
        self.id = id
    }
}
