import Foundation
import Logging
import MarqueeAPNS
import MarqueeCore
import Synchronization

/// Runs one leased fan-out job: streams its work's pages into `APNSClient.send(pages:)`, feeds the
/// outcomes to `FanOutStateMachine` and does what it decides (commit a batch with its checkpoint,
/// retry after a delay, finish, or hand the job back). The I/O half of every fan-out; what is sent
/// and where outcomes go is the `FanOutWork`'s.
struct FanOutRunner: Sendable {
    let store: any MarqueeStore
    let configuration: JobWorkerConfiguration
    let clock: any WallClock
    let logger: Logger
    let metrics: JobMetrics

    /// How a run ended.
    enum Ending: Sendable, Hashable {
        case completed
        /// Handed back (a stop, or APNs refusing too much): the job runs again from its checkpoint.
        case rescheduled
    }

    /// Runs the job until it is done, `stop` is raised (then in-flight sends are answered and
    /// committed before it returns), or its lease is lost (`StoreError.leaseLost`).
    func run(
        _ job: Job,
        owner: String,
        stop: RunStop,
        client: APNSClient,
        machine: FanOutStateMachine,
        work: some FanOutWork
    ) async throws -> Ending {
        let context = Context(job: job, owner: owner, machine: MachineBox(machine), stop: stop)
        // Metrics speak of the job the API shows: a partition's run counts under its fan-out.
        let reported = job.parentID ?? job.id
        metrics.runStarted(reported)
        defer { metrics.runEnded(reported) }
        await refreshRemaining(of: job, force: true)
        return try await withThrowingTaskGroup(of: Ending?.self) { group in
            group.addTask {
                // Keeps the lease while the job runs; a refused renewal (the job was cancelled or
                // taken over) stops the run.
                while true {
                    try await Task.sleep(for: configuration.leaseDuration / 3)
                    let held = try await store.renewJobLease(id: job.id, owner: owner, now: clock.now, leaseDuration: configuration.leaseDuration)
                    if !held {
                        stop.raise()
                        return nil
                    }
                }
            }
            group.addTask {
                try await fanOut(context, client: client, work: work)
            }
            defer { group.cancelAll() }
            while let ending = try await group.next() {
                if let ending { return ending }
            }
            throw StoreError.leaseLost(job.id)
        }
    }

    private struct Context: Sendable {
        var job: Job
        var owner: String
        var machine: MachineBox
        var stop: RunStop
    }

    private func fanOut(_ context: Context, client: APNSClient, work: some FanOutWork) async throws -> Ending {
        let pages = WorkPushPages(
            work: work,
            cursor: context.job.checkpoint.flatMap(Int64.init) ?? 0,
            pageSize: configuration.pageSize,
            machine: context.machine,
            stop: context.stop
        )
        try await sendRound(context, client: client, work: work, pages: pages)
        while true {
            if context.stop.isRaised { return try await handBack(context, at: clock.now, why: "the worker stopped") }
            switch context.machine.withLock({ $0.nextStep(now: clock.now) }) {
            case .complete:
                try await store.completeJob(id: context.job.id, owner: context.owner, at: clock.now)
                // One line per job or partition, at info: which replica finished which part.
                logger.info(
                    "fan-out completed",
                    metadata: [
                        "job.id": "\(context.job.id)",
                        "job.kind": "\(context.job.kind)",
                        "job.parent_id": "\(context.job.parentID.map { "\($0)" } ?? "")",
                        "job.owner": "\(context.owner)",
                    ]
                )
                return .completed
            case .rescheduleJob(let at):
                return try await handBack(context, at: at, why: "APNs asked to retry too many sends later")
            case .retry(let at):
                while clock.now < at && !context.stop.isRaised { try await Task.sleep(for: .milliseconds(50)) }
                if context.stop.isRaised { continue }
                // A job cancelled while its sends waited is noticed before the retries go out.
                guard try await store.renewJobLease(id: context.job.id, owner: context.owner, now: clock.now, leaseDuration: configuration.leaseDuration) else {
                    throw StoreError.leaseLost(context.job.id)
                }
                // Retries go through the start ledger: a token another job started meanwhile is not sent.
                let now = clock.now
                let started = try await work.alreadyStarted(among: context.machine.withLock { $0.retryRowsDue(now: now) })
                let due = context.machine.withLock { machine in
                    machine.beginRound()
                    return machine.retriesDue(now: now, alreadyStarted: started)
                }
                let pushes = try due.map(work.push)
                try await sendRound(context, client: client, work: work, pages: FixedPushPages(pages: pushes.isEmpty ? [] : [pushes]), beginRound: false)
            }
        }
    }

    /// Sends one round and commits its outcomes in batches as they come.
    private func sendRound<Pages: AsyncSequence & Sendable>(
        _ context: Context,
        client: APNSClient,
        work: some FanOutWork,
        pages: Pages,
        beginRound: Bool = true
    ) async throws where Pages.Element == [APNSDevicePush] {
        if beginRound { context.machine.withLock { $0.beginRound() } }
        var sourceError: (any Error)?
        do {
            for try await chunk in client.send(pages: pages, window: configuration.window) {
                let now = clock.now
                let batch = context.machine.withLock { machine -> FanOutStateMachine.Batch? in
                    for outcome in chunk {
                        switch outcome.result {
                        case .success(let result):
                            machine.outcome(index: outcome.index, .accepted(apnsID: UUID(uuidString: result.apnsID)), now: now)
                        case .failure(let error):
                            machine.outcome(index: outcome.index, .failed(error), now: now)
                        }
                    }
                    return machine.shouldCommit ? machine.takeBatch() : nil
                }
                if let batch, !batch.isEmpty { try await commit(batch, context, work: work) }
            }
        } catch let error as APNSPushSourceError<Pages.Failure> {
            sourceError = error.underlying
        } catch {
            // A lost lease (the job was cancelled or taken over) or a failed commit: stop the page
            // source, so that the client sends only what it already holds.
            context.stop.raise()
            throw error
        }
        let last = context.machine.withLock { machine in
            machine.roundEnded(now: clock.now)
            return machine.takeBatch()
        }
        if !last.isEmpty { try await commit(last, context, work: work) }
        if let sourceError { throw sourceError }
    }

    private func commit(_ batch: FanOutStateMachine.Batch, _ context: Context, work: some FanOutWork) async throws {
        let policy = CommitRetryPolicy(patience: configuration.leaseDuration)
        let started = ContinuousClock.now
        var failures = 0
        while true {
            do {
                try await work.commit(batch, owner: context.owner)
                break
            } catch {
                failures += 1
                guard let delay = policy.delay(afterFailures: failures, error: error, elapsed: .now - started) else { throw error }
                logger.warning(
                    "committing a batch of outcomes failed; committing it again rather than sending it again",
                    metadata: ["job.id": "\(context.job.id)", "error": "\(String(reflecting: error))", "retry_in": "\(delay)"]
                )
                try await Task.sleep(for: delay)
            }
        }
        metrics.committed(kind: context.job.kind, batch.deliveries)
        await refreshRemaining(of: context.job)
    }

    /// Sets the remaining-tokens gauge of the job the API shows from the store: the whole job's,
    /// whichever replicas run its other parts. At most once a second per job (`JobMetrics`); a
    /// failed read leaves the gauge as it was (it is a gauge, not a record).
    private func refreshRemaining(of job: Job, force: Bool = false) async {
        let reported = job.parentID ?? job.id
        guard metrics.remainingIsDue(reported, force: force) else { return }
        do {
            guard let top = try await store.job(appID: job.appID, id: reported) else { return }
            let parts = job.parentID == nil ? [] : try await store.childJobs(appID: job.appID, parentID: reported)
            let combined = top.combined(with: parts)
            if let total = combined.progress.total {
                metrics.setRemaining(reported, total - combined.progress.attempted)
            }
        } catch {
            logger.debug("reading the job's progress for its metrics failed", metadata: ["error": "\(String(reflecting: error))"])
        }
    }

    private func handBack(_ context: Context, at: Date, why: String) async throws -> Ending {
        try await store.failJob(
            id: context.job.id,
            owner: context.owner,
            error: "\(why); the job resumes from its checkpoint",
            retryAt: at,
            at: clock.now
        )
        return .rescheduled
    }
}

/// The state machine behind a lock: the page source and the outcome loop run on different tasks.
final class MachineBox: Sendable {
    private let machine: Mutex<FanOutStateMachine>

    init(_ machine: FanOutStateMachine) {
        self.machine = Mutex(machine)
    }

    func withLock<Result: Sendable>(_ body: (inout FanOutStateMachine) throws -> Result) rethrows -> Result {
        try machine.withLock { try body(&$0) }
    }
}

/// A flag a run checks between pages: raised on shutdown or when the lease is gone.
/// A run's flag is also raised by its worker's (`parent`); raising it leaves the parent alone.
public final class RunStop: Sendable {
    private let raised = Mutex(false)
    private let parent: RunStop?

    public init(parent: RunStop? = nil) {
        self.parent = parent
    }

    public func raise() { raised.withLock { $0 = true } }
    public var isRaised: Bool { raised.withLock { $0 } || parent?.isRaised == true }
}

/// The work's pages as pages of pushes, read one at a time (keyset, from the checkpoint), each
/// registered with the state machine before it is handed to the client.
struct WorkPushPages<Work: FanOutWork>: AsyncSequence, Sendable {
    typealias Element = [APNSDevicePush]

    let work: Work
    let cursor: Int64
    let pageSize: Int
    let machine: MachineBox
    let stop: RunStop

    struct AsyncIterator: AsyncIteratorProtocol {
        let pages: WorkPushPages
        var cursor: Int64
        var finished = false

        mutating func next() async throws -> [APNSDevicePush]? {
            while !finished {
                if pages.stop.isRaised || pages.machine.withLock({ $0.retryBacklogIsFull }) { return nil }
                guard let page = try await pages.work.page(after: cursor, limit: pages.pageSize, machine: pages.machine) else {
                    finished = true
                    return nil
                }
                cursor = page.lastRow
                finished = page.isLast
                let pushes = try page.sends.map(pages.work.push)
                if !pushes.isEmpty { return pushes }
            }
            return nil
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(pages: self, cursor: cursor)
    }
}

/// Pages given up front: a retry round.
struct FixedPushPages: AsyncSequence, Sendable {
    typealias Element = [APNSDevicePush]
    let pages: [[APNSDevicePush]]

    struct AsyncIterator: AsyncIteratorProtocol {
        var remaining: IndexingIterator<[[APNSDevicePush]]>
        mutating func next() async throws -> [APNSDevicePush]? { remaining.next() }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(remaining: pages.makeIterator()) }
}
