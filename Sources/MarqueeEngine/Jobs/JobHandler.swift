import MarqueeCore

/// What runs the jobs of some kinds for `JobWorker`: the start fan-out's partitions, schedules.
/// The worker leases due jobs of every handler's kinds, keeps the count of running jobs, records
/// failures and retries them with backoff; the handler does the work.
public protocol JobHandler: Sendable {
    /// The kinds of job it runs; no two handlers of one worker share a kind.
    var kinds: Set<JobKind> { get }

    /// Runs one leased job until it is done or handed back. `stop` is raised on shutdown or when
    /// the lease is lost; a handler that throws has the job retried later, unless
    /// `isPermanentFailure` says otherwise or its attempts are used up.
    func run(_ job: Job, owner: String, stop: RunStop) async throws -> JobEnding

    /// Whether a thrown error means the job cannot work as given: it is failed at once.
    func isPermanentFailure(_ error: any Error) -> Bool

    /// Called once the worker gave up on the job and recorded it failed.
    func gaveUp(on job: Job, error: any Error) async
}

extension JobHandler {
    public func isPermanentFailure(_ error: any Error) -> Bool { false }
    public func gaveUp(on job: Job, error: any Error) async {}
}

/// How a handler's run ended.
public enum JobEnding: Sendable, Hashable {
    /// The job is done; the handler recorded it (`JobStore.completeJob`).
    case completed
    /// Handed back (a stop, APNs refusing too much, not due yet): the job runs again later, from
    /// its checkpoint.
    case rescheduled
}
