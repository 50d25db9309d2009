import CoreMetrics
import Foundation
import MarqueeCore
import Synchronization

/// What this replica's job runs report through swift-metrics:
///
/// - `marquee_job_tokens_total{kind,outcome}`: tokens whose final outcome a run committed:
///   `accepted`, `failed` (rejected, or failed after the last retry), `retired` (APNs said the
///   token is gone), `skipped`, `uncertain` (a start written to APNs that got no answer: the device
///   may or may not have it)
/// - `marquee_jobs_running`: jobs this replica runs a part of now (a fan-out's partitions count
///   once, under the fan-out)
/// - `marquee_job_remaining_tokens{job}`: tokens the whole job has still to send, read from the
///   store (every replica running a part reports the same number, hence `max by (job)` in the
///   dashboard); the series goes when this replica's last run of the job ends
///
/// The `job` label is the job's ID as the API shows it (`job_…`): the one ID metrics carry, so that
/// an operator can go from a panel to `GET /v1/jobs/{jobID}`.
final class JobMetrics: Sendable {
    static let tokens = "marquee_job_tokens_total"
    static let running = "marquee_jobs_running"
    static let remaining = "marquee_job_remaining_tokens"
    /// The store is read for the remaining count at most this often per job and replica, however
    /// fast batches commit.
    static let remainingRefreshInterval = Duration.seconds(1)

    private struct TokenKey: Hashable {
        var kind: String
        var outcome: String
    }

    private struct Run {
        var count: Int
        var remaining: Meter
        var refreshedAt: ContinuousClock.Instant?
    }

    private struct State {
        var runs: [JobID: Run] = [:]
        var tokenCounters: [TokenKey: Counter] = [:]
    }

    private let factory: any MetricsFactory
    private let runningJobs: Meter
    private let state = Mutex(State())

    init(factory: any MetricsFactory) {
        self.factory = factory
        runningJobs = Meter(label: Self.running, dimensions: [], factory: factory)
        runningJobs.set(0)
    }

    /// The `kind` label: what the API calls the job, whichever part of it ran.
    static func kindLabel(_ kind: JobKind) -> String {
        switch kind {
        case .startFanOut, .startFanOutPartition: "start"
        default: kind.rawValue
        }
    }

    /// The job's ID as the API shows it.
    static func jobLabel(_ id: JobID) -> String { id.publicID }

    /// A run of (a part of) `job` began here.
    func runStarted(_ job: JobID) {
        state.withLock { state in
            if var run = state.runs[job] {
                run.count += 1
                state.runs[job] = run
                return
            }
            state.runs[job] = Run(
                count: 1,
                remaining: Meter(label: Self.remaining, dimensions: [("job", Self.jobLabel(job))], factory: factory),
                refreshedAt: nil
            )
            runningJobs.increment()
        }
    }

    /// A run of (a part of) `job` ended here; the last one takes the job's series away.
    func runEnded(_ job: JobID) {
        state.withLock { state in
            guard var run = state.runs[job] else { return }
            run.count -= 1
            if run.count > 0 {
                state.runs[job] = run
                return
            }
            state.runs[job] = nil
            run.remaining.destroy()
            runningJobs.decrement()
        }
    }

    /// Whether the remaining count of `job` is due for a refresh from the store (and, if so, marks
    /// it refreshed now). `force` refreshes whatever the interval.
    func remainingIsDue(_ job: JobID, force: Bool = false) -> Bool {
        let now = ContinuousClock.now
        return state.withLock { state in
            guard var run = state.runs[job] else { return false }
            if !force, let last = run.refreshedAt, now - last < Self.remainingRefreshInterval { return false }
            run.refreshedAt = now
            state.runs[job] = run
            return true
        }
    }

    func setRemaining(_ job: JobID, _ remaining: Int64) {
        let meter = state.withLock { $0.runs[job]?.remaining }
        meter?.set(max(0, remaining))
    }

    /// A batch of final outcomes was committed.
    func committed(kind: JobKind, _ deliveries: [Delivery]) {
        guard !deliveries.isEmpty else { return }
        var accepted = 0
        var failed = 0
        var retired = 0
        var skipped = 0
        var uncertain = 0
        for delivery in deliveries {
            switch delivery.outcome {
            case .accepted: accepted += 1
            case .rejected, .failed: failed += 1
            case .tokenInvalid: retired += 1
            case .skipped: skipped += 1
            case .uncertain: uncertain += 1
            }
        }
        let label = Self.kindLabel(kind)
        for (outcome, count) in [
            ("accepted", accepted), ("failed", failed), ("retired", retired), ("skipped", skipped),
            ("uncertain", uncertain),
        ] where count > 0 {
            tokenCounter(kind: label, outcome: outcome).increment(by: count)
        }
    }

    private func tokenCounter(kind: String, outcome: String) -> Counter {
        let key = TokenKey(kind: kind, outcome: outcome)
        return state.withLock { state in
            if let counter = state.tokenCounters[key] { return counter }
            let counter = Counter(
                label: Self.tokens,
                dimensions: [("kind", kind), ("outcome", outcome)],
                factory: factory
            )
            state.tokenCounters[key] = counter
            return counter
        }
    }
}
