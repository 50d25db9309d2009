import MarqueeCore

/// Runs the jobs of some kinds for the `JobWorker`, which leases them, keeps nothing of their
/// meaning and records how they ended.
protocol JobHandler: Sendable {
    /// The kinds this handler runs; the worker leases only kinds it has a handler for.
    var kinds: Set<JobKind> { get }
    /// Runs the leased job. `.completed` when it finished (the job is marked succeeded by then);
    /// `.rescheduled` when it handed the job back. Throws `StoreError.leaseLost` when the lease
    /// went (cancelled, or taken over), `JobFailure` (or an `EngineError`) for a job that can
    /// never work as given, anything else for a failure worth another attempt.
    func run(_ job: Job, owner: String, stop: RunStop) async throws -> FanOutRunner.Ending
}

/// A job that cannot work as given (its arguments, its app's configuration): it fails at once
/// rather than being tried again.
struct JobFailure: Error, CustomStringConvertible {
    var description: String
}
