import Foundation
import Logging
import MarqueeCore
import ServiceLifecycle
import Synchronization

/// A replica's job worker: leases due jobs (`FOR UPDATE SKIP LOCKED` on PostgreSQL), runs them,
/// and keeps their leases while they run. Woken by `JobWakeup` (enqueues here, LISTEN/NOTIFY on
/// PostgreSQL), polling otherwise. A job whose worker died is leased again once its lease lapses,
/// and resumes from its checkpoint.
///
/// On shutdown (graceful or cancellation) it leases nothing more, lets each running fan-out finish
/// the sends in flight and commit them, and hands the jobs back so another replica resumes them at
/// once.
public struct JobWorker: Service {
    let store: any JobStore
    /// Who runs each kind of job.
    let handlers: [JobKind: any JobHandler]
    let configuration: JobWorkerConfiguration
    let wakeup: JobWakeup
    let clock: any WallClock
    let logger: Logger
    /// This replica and worker. Each lease it takes is owned by this name with a token of its own
    /// (`leaseOwner()`), so that a run whose lease lapsed can never renew or commit under a later
    /// lease of the same job, even one this worker took.
    public let owner: String

    init(
        store: any JobStore,
        handlers: [any JobHandler],
        configuration: JobWorkerConfiguration,
        wakeup: JobWakeup,
        clock: any WallClock,
        logger: Logger
    ) {
        self.store = store
        var byKind: [JobKind: any JobHandler] = [:]
        for handler in handlers {
            for kind in handler.kinds { byKind[kind] = handler }
        }
        self.handlers = byKind
        self.configuration = configuration
        self.wakeup = wakeup
        self.clock = clock
        self.logger = logger
        owner = "\(ProcessInfo.processInfo.hostName)/\(UUID.random().uuidString.prefix(8).lowercased())"
    }

    public func run() async throws {
        let running = RunningJobs()
        await wakeup.runUntilStopped { stop in
            while !stop.isRaised {
                let free = configuration.concurrency - running.count
                var leasedAll = false
                if free > 0 {
                    do {
                        let lease = leaseOwner()
                        let jobs = try await store.leaseJobs(
                            owner: lease,
                            kinds: Set(handlers.keys),
                            now: clock.now,
                            leaseDuration: configuration.leaseDuration,
                            limit: free
                        )
                        for job in jobs {
                            // Unstructured on purpose: cancelling the worker must not cut a
                            // fan-out off mid-flight; `stop` ends it after its in-flight sends.
                            let run = RunningJobs.Run(jobID: job.id, lease: lease)
                            running.add(run, Task { await runJob(job, lease: lease, stop: stop, running: running) })
                        }
                        leasedAll = !jobs.isEmpty && jobs.count == free
                    } catch {
                        logger.warning("leasing jobs failed", metadata: ["error": "\(String(reflecting: error))"])
                    }
                }
                if !leasedAll && !stop.isRaised { await wakeup.wait(timeout: configuration.pollInterval) }
            }
        }
        await drain(running)
    }

    /// Waits for the runs to hand their jobs back, which they do once their in-flight sends are
    /// answered and committed: normally within moments. A run still going after a lease's length is
    /// named and cancelled (its lease renewal stops, so the lease lapses and another replica resumes
    /// the job from its checkpoint, as after a crash), so that a stuck send never keeps the replica
    /// from stopping.
    private func drain(_ running: RunningJobs) async {
        let noneLeft = running.noneLeft()
        let begun = clock.now
        let giveUpAt = begun.addingTimeInterval(configuration.leaseDuration.timeInterval)
        var nextWarning = begun.addingTimeInterval(5)
        while true {
            let left = running.byRun
            if left.isEmpty { return }
            let ids = "\(left.keys.map(\.jobID.publicID).sorted())"
            let now = clock.now
            if now >= giveUpAt {
                logger.warning(
                    """
                    job runs did not hand their jobs back within a lease's length of the stop; cancelled, their \
                    leases lapse and the jobs resume elsewhere from their checkpoints
                    """,
                    metadata: ["job.ids": "\(ids)"]
                )
                for task in left.values { task.cancel() }
                return
            }
            if now >= nextWarning {
                nextWarning = now.addingTimeInterval(5)
                logger.warning(
                    "stopping: still waiting for job runs to hand their jobs back",
                    metadata: ["job.ids": "\(ids)", "waited": "\(clock.elapsed(since: begun))"]
                )
            }
            // Until the last run ends, the next warning or the lease's length, whichever comes
            // first. Not a sleep of this task's: the worker may be stopping because it was
            // cancelled, and a cancelled sleep returns at once.
            let wake = min(giveUpAt, nextWarning)
            await Task { _ = try? await clock.sleep(until: wake, unlessOpened: noneLeft) }.value
        }
    }

    /// The owner of one lease: this worker's name and a token for that lease alone.
    private func leaseOwner() -> String {
        "\(owner)/\(UUID.random().uuidString.prefix(8).lowercased())"
    }

    private func runJob(_ job: Job, lease: String, stop: RunStop, running: RunningJobs) async {
        defer {
            running.remove(RunningJobs.Run(jobID: job.id, lease: lease))
            wakeup.signal()
        }
        var jobLogger = logger
        jobLogger[metadataKey: "job.id"] = "\(job.id.publicID)"
        if let parentID = job.parentID { jobLogger[metadataKey: "job.parent_id"] = "\(parentID.publicID)" }
        var finished = false
        do {
            guard let handler = handlers[job.kind] else {
                throw JobFailure(description: "no handler runs \(job.kind) jobs")
            }
            finished = try await handler.run(job, owner: lease, stop: RunStop(parent: stop)) == .completed
        } catch StoreError.leaseLost {
            jobLogger.debug("the job's lease was lost (cancelled, or taken over after expiry)")
        } catch let abandoned as FanOutRunAbandoned {
            // The run gave its lease up itself (or it lapses), with the reason in the job's lastError.
            jobLogger.warning("job run stopped", metadata: ["reason": "\(abandoned.fence)"])
        } catch {
            // A job that cannot work as given fails for good; anything else is tried again later.
            let permanent =
                error is EngineError || error is JobFailure || job.attempts >= configuration.maximumJobAttempts
            let retryAt = permanent ? nil : clock.now.addingTimeInterval(min(60, pow(2, Double(job.attempts))))
            jobLogger.warning(
                "job failed",
                metadata: ["error": "\(String(reflecting: error))", "job.retry": "\(!permanent)"]
            )
            finished =
                await recordFailure(of: job, owner: lease, error: error, retryAt: retryAt, logger: jobLogger)
                && permanent
        }
        // The last partition to finish, on whichever replica, finishes the fan-out.
        if finished, let parentID = job.parentID {
            do {
                if let state = try await store.finishParentJob(id: parentID, at: clock.now) {
                    jobLogger.debug("start fan-out finished", metadata: ["job.state": "\(state.rawValue)"])
                }
            } catch {
                jobLogger.warning("finishing the fan-out failed", metadata: ["error": "\(String(reflecting: error))"])
            }
        }
    }
}

/// The runs a worker has going: one per lease, so that a run of a job whose lease lapsed and a
/// later run of the same job (leased again, by this worker or another) are told apart.
final class RunningJobs: Sendable {
    struct Run: Hashable, Sendable {
        var jobID: JobID
        /// The lease's owner token.
        var lease: String
    }

    private struct State {
        var tasks: [Run: Task<Void, Never>] = [:]
        /// Runs that ended before their task was added.
        var ended: Set<Run> = []
        /// Opened when the last run ends (`noneLeft`).
        var whenNoneLeft: [Latch] = []
    }

    private let state = Mutex(State())

    var count: Int { state.withLock { $0.tasks.count } }
    var byRun: [Run: Task<Void, Never>] { state.withLock { $0.tasks } }

    func add(_ run: Run, _ task: Task<Void, Never>) {
        state.withLock { state in
            if state.ended.remove(run) == nil { state.tasks[run] = task }
        }
    }

    func remove(_ run: Run) {
        let opened = state.withLock { state -> [Latch] in
            if state.tasks.removeValue(forKey: run) == nil { state.ended.insert(run) }
            guard state.tasks.isEmpty else { return [] }
            defer { state.whenNoneLeft.removeAll() }
            return state.whenNoneLeft
        }
        for latch in opened { latch.open() }
    }

    /// A latch that opens once no run is left (open already if none is).
    func noneLeft() -> Latch {
        state.withLock { state in
            if state.tasks.isEmpty { return Latch(open: true) }
            let latch = Latch()
            state.whenNoneLeft.append(latch)
            return latch
        }
    }
}
