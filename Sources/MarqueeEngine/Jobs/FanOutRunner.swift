import Foundation
import Logging
import MarqueeAPNS
import MarqueeCore

/// Runs one leased fan-out job: streams its work's pages into `APNSClient.send(pages:)`, feeds the
/// outcomes to `FanOutStateMachine` and does what it decides (commit a batch with its checkpoint,
/// retry after a delay, finish, or hand the job back). The I/O half of every fan-out; what is sent
/// and where outcomes go is the `FanOutWork`'s.
struct FanOutRunner: Sendable {
    let store: any JobStore
    let configuration: JobWorkerConfiguration
    let clock: any WallClock
    let logger: Logger
    let metrics: JobMetrics

    /// Pushes handed to the client at once at most (`WorkPushPages`); a run with a smaller window
    /// hands out slices of its window, so that what waits unsent in the client (and is uncertain
    /// after a crash) stays a few windows whatever the page size.
    static let maximumSliceSize = 100

    /// How a run ended.
    enum Ending: Sendable, Hashable {
        case completed
        /// Handed back (a stop, or APNs refusing too much): the job runs again from its checkpoint.
        case rescheduled
    }

    /// Runs the job until it is done, `stop` is raised (then in-flight sends are answered and
    /// committed before it returns), or its lease is lost (`StoreError.leaseLost`).
    ///
    /// Beside the sending, a watch keeps the lease (`LeaseKeeper`): it renews it ahead of expiry; on
    /// a failed renewal it stops the handing out of new sends and lets the run commit what is in
    /// flight and hand the job back; on a refused renewal, a lease that could lapse, or a run that
    /// made no progress for `stallTimeout`, it stops the sending at once (the client drops what it
    /// has not written) and gives the lease up (`FanOutRunAbandoned`), so a run stuck on a call that
    /// never returns cannot hold its part from every other replica.
    func run(
        _ job: Job,
        owner: String,
        stop: RunStop,
        client: any APNSDevicePushing,
        machine: FanOutStateMachine,
        work: some FanOutWork
    ) async throws -> Ending {
        let now = clock.now
        let keeper = KeeperBox(
            LeaseKeeper(
                configuration: configuration.leaseKeeping,
                leaseExpiresAt: job.lease?.expiresAt
                    ?? now.addingTimeInterval(configuration.leaseDuration.timeInterval),
                now: now
            )
        )
        let context = Context(
            job: job,
            owner: owner,
            machine: MachineBox(machine),
            stop: stop,
            keeper: keeper,
            reservation: ReservationBox(job.reservedThrough)
        )
        // Metrics speak of the job the API shows: a partition's run counts under its fan-out.
        let reported = job.parentID ?? job.id
        metrics.runStarted(reported)
        defer { metrics.runEnded(reported) }
        await refreshRemaining(of: job, force: true)
        return try await withThrowingTaskGroup(of: Ending?.self) { group in
            group.addTask {
                try await watch(context)
                return nil
            }
            group.addTask {
                try await fanOut(context, client: client, work: work)
            }
            defer { group.cancelAll() }
            do {
                while let ending = try await group.next() {
                    if let ending { return ending }
                }
            } catch let abandoned as FanOutRunAbandoned {
                // Cancelling the sending ends the client's outcome sequence, which drops every push
                // not yet written; what was written has no outcome here and stays reserved.
                group.cancelAll()
                if abandoned.fence == .refused { throw StoreError.leaseLost(job.id) }
                await lowerReservation(afterFailureOf: context)
                await giveUp(context, abandoned)
                throw abandoned
            } catch StoreError.leaseLost(let id) {
                throw StoreError.leaseLost(id)
            } catch {
                group.cancelAll()
                await lowerReservation(afterFailureOf: context)
                throw error
            }
            throw StoreError.leaseLost(job.id)
        }
    }

    struct Context: Sendable {
        var job: Job
        var owner: String
        var machine: MachineBox
        var stop: RunStop
        var keeper: KeeperBox
        var reservation: ReservationBox

        /// Whether new sends may be handed to the client now: not stopped, the lease sure to hold.
        /// A no raises the run's stop, so it stays a no: the page source asks before every slice and
        /// the watch only every `watchInterval`, and a round its page source ended early must end
        /// in a hand-back, never be taken for the end of the audience (the part would complete
        /// with the rest of it never sent).
        func mayHandOutSends(now: Date) -> Bool {
            guard !stop.isRaised else { return false }
            guard keeper.withLock({ $0.mayHandOutSends(now: now) }) else {
                stop.raise()
                return false
            }
            return true
        }
    }

    func fanOut(_ context: Context, client: any APNSDevicePushing, work: some FanOutWork) async throws -> Ending {
        let pages = WorkPushPages(
            sliceSize: min(Self.maximumSliceSize, configuration.window ?? .max),
            work: work,
            cursor: context.job.checkpoint.flatMap(Int64.init) ?? 0,
            pageSize: configuration.pageSize,
            machine: context.machine,
            mayHandOut: { context.mayHandOutSends(now: clock.now) },
            handingOut: { row in try await handingOut(through: row, context, work: work) },
            handedOut: { row in context.reservation.handedOut(through: row) }
        )
        try await sendRound(context, client: client, work: work, pages: pages)
        while true {
            if context.stop.isRaised {
                let now = clock.now
                let why =
                    context.keeper.withLock { $0.sendingStopped(now: now) }.map { "\($0)" } ?? "the worker stopped"
                return try await handBack(context, at: now, why: why)
            }
            switch context.machine.withLock({ $0.nextStep(now: clock.now) }) {
            case .complete:
                try await store.completeJob(id: context.job.id, owner: context.owner, at: clock.now)
                // One line per job or partition, at info: which replica finished which part.
                logger.info(
                    "fan-out completed",
                    metadata: [
                        "job.id": "\(context.job.id.publicID)",
                        "job.kind": "\(context.job.kind)",
                        "job.parent_id": "\(context.job.parentID?.publicID ?? "")",
                        "job.owner": "\(context.owner)",
                    ]
                )
                return .completed
            case .rescheduleJob(let at):
                return try await handBack(context, at: at, why: "APNs asked to retry too many sends later")
            case .retry(let at):
                // Idle on purpose until the retry is due: no stall before then. A stop (the worker's,
                // or the watch's) ends the wait, and the loop hands the job back.
                context.keeper.withLock { $0.progressed(at: at) }
                guard try await clock.sleep(until: at, unlessRaised: context.stop) else { continue }
                // A job cancelled while its sends waited is noticed before the retries go out.
                let askedAt = clock.now
                guard
                    try await store.renewJobLease(
                        id: context.job.id,
                        owner: context.owner,
                        now: askedAt,
                        leaseDuration: configuration.leaseDuration
                    )
                else {
                    context.keeper.withLock { $0.renewalRefused() }
                    throw StoreError.leaseLost(context.job.id)
                }
                context.keeper.withLock { $0.renewalSucceeded(askedAt: askedAt) }
                // Retries go through the start ledger: a token another job started meanwhile is not sent.
                let now = clock.now
                let started = try await work.alreadyStarted(
                    among: context.machine.withLock { $0.retryRowsDue(now: now) }
                )
                let due = context.machine.withLock { machine in
                    machine.beginRound()
                    return machine.retriesDue(now: now, alreadyStarted: started)
                }
                let pushes = try due.map(work.push)
                let pages = FixedPushPages(
                    pages: pushes.isEmpty ? [] : [pushes],
                    mayHandOut: { context.mayHandOutSends(now: clock.now) },
                    withheld: { count in context.machine.withLock { $0.retriesNotSent(count, now: clock.now) } }
                )
                try await sendRound(context, client: client, work: work, pages: pages, beginRound: false)
            }
        }
    }

    /// Sends one round and commits its outcomes in batches as they come.
    func sendRound<Pages: AsyncSequence & Sendable>(
        _ context: Context,
        client: any APNSDevicePushing,
        work: some FanOutWork,
        pages: Pages,
        beginRound: Bool = true
    ) async throws where Pages.Element == [APNSDevicePush] {
        if beginRound { context.machine.withLock { $0.beginRound() } }
        var sourceError: (any Error)?
        // Commits happen one at a time, in order (each batch's checkpoint is past the last): from
        // the outcome loop as outcomes arrive, and from the flusher while none arrive, so that an
        // outcome waits `commitInterval` at most even when APNs answers nothing more.
        let lane = CommitLane()
        let roundOver = RunStop()
        async let flushing: Void = flush(context, work: work, lane: lane, until: roundOver)
        do {
            for try await chunk in client.send(pages: pages, window: configuration.window) {
                let now = clock.now
                context.machine.withLock { machine in
                    for outcome in chunk {
                        switch outcome.result {
                        case .success(let result):
                            machine.outcome(
                                index: outcome.index,
                                .accepted(apnsID: UUID(canonical: result.apnsID)),
                                now: now
                            )
                        case .failure(let error):
                            machine.outcome(index: outcome.index, .failed(error), now: now)
                        }
                    }
                }
                context.keeper.withLock { $0.progressed(at: now) }
                try await commitIfDue(context, work: work, lane: lane)
            }
            // Cancelled (the run was stopped at once): the client dropped what it had not written,
            // and what it wrote has no outcome here. Nothing is committed as if it had ended.
            try Task.checkCancellation()
        } catch let error as APNSPushSourceError<Pages.Failure> {
            sourceError = error.underlying
        } catch {
            // A lost lease (the job was cancelled or taken over) or a failed commit: stop the page
            // source, so that the client sends only what it already holds.
            context.stop.raise()
            throw error
        }
        roundOver.raise()
        try await flushing
        let last = context.machine.withLock { machine in
            machine.roundEnded(now: clock.now)
            return machine.takeBatch()
        }
        if !last.isEmpty { try await commit(last, context, work: work) }
        if let sourceError { throw sourceError }
    }

    /// Sends are about to be handed to the client: the tokens through `row` are reserved first (the
    /// highest row handed out, recorded with the job), so a later run knows which tokens a crash
    /// of this one may have left sent without an outcome. Only upwards: a reservation inherited from an earlier run
    /// stays until this run's own
    /// checkpoint passes it.
    func handingOut(through row: Int64, _ context: Context, work: some FanOutWork) async throws {
        context.keeper.withLock { $0.progressed(at: clock.now) }
        guard work.reservesTokens, row > (context.reservation.current ?? Int64.min) else { return }
        try await store.reserveJobTokens(id: context.job.id, owner: context.owner, through: row, at: clock.now)
        context.reservation.current = row
    }

    /// A run that failed (a commit or a store call) or gave its lease up (stalled, or a lease that
    /// could lapse), while the lease is still its own, lowers its reservation to the highest row
    /// it handed out, never below the one it inherited (whose tokens it may not have settled):
    /// what it reserved ahead and never handed out is then sent by the next run, not counted
    /// uncertain in its crash window. Without this, a run that failed at a PostgreSQL restart left
    /// up to four slices it never sent uncertain, and under `confirm` the devices whose app never
    /// wakes went without the activity. Best effort: a store that fails again (or a lease already
    /// gone) leaves the reservation as it was, which is safe.
    func lowerReservation(afterFailureOf context: Context) async {
        guard let reserved = context.reservation.current else { return }
        let floor = [context.reservation.handedOutThrough, context.job.reservedThrough].compactMap { $0 }.max()
        guard floor.map({ $0 < reserved }) ?? true else { return }
        do {
            try await store.reserveJobTokens(id: context.job.id, owner: context.owner, through: floor, at: clock.now)
            context.reservation.current = floor
        } catch {
            logger.debug(
                "lowering the reservation of a failed run failed; it stays",
                metadata: ["job.id": "\(context.job.id.publicID)", "error": "\(String(reflecting: error))"]
            )
        }
    }

    /// Sets the remaining-tokens gauge of the job the API shows from the store: the whole job's,
    /// whichever replicas run its other parts. At most once a second per job (`JobMetrics`); a
    /// failed read leaves the gauge as it was (it is a gauge, not a record).
    func refreshRemaining(of job: Job, force: Bool = false) async {
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
            logger.debug(
                "reading the job's progress for its metrics failed",
                metadata: ["error": "\(String(reflecting: error))"]
            )
        }
    }

    /// Hands the job back after the round ended and its outcomes were committed: every send the run
    /// handed out has a committed final outcome or waits for a retry (APNs refused it for now), so
    /// nothing this run sent is uncertain, and its reservation is lowered to what it inherited (if
    /// this run's checkpoint has not passed that) before the lease goes.
    func handBack(_ context: Context, at: Date, why: String) async throws -> Ending {
        if context.reservation.current != nil {
            let checkpoint = context.machine.withLock { $0.lastCheckpoint } ?? 0
            let inherited = context.job.reservedThrough.flatMap { $0 > checkpoint ? $0 : nil }
            if inherited != context.reservation.current {
                try await store.reserveJobTokens(
                    id: context.job.id,
                    owner: context.owner,
                    through: inherited,
                    at: clock.now
                )
                context.reservation.current = inherited
            }
        }
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
