import Foundation
import Logging
import MarqueeAPNS
import MarqueeCore
import NIOCore

/// Runs activity-update jobs: the event's update or end pushed to the update token of each of its
/// activities that is not on a channel (iOS 17.2–17.x, or started with `input-push-token`), through
/// `FanOutRunner`, with timestamps that keep increasing per activity.
struct ActivityUpdateHandler: JobHandler {
    let store: any ActivityStore & AppStore
    let clients: APNSClientRegistry
    let runner: FanOutRunner
    let budget: ActivityPriorityBudget

    var kinds: Set<JobKind> { [.activityUpdate] }

    func run(_ job: Job, owner: String, stop: RunStop) async throws -> FanOutRunner.Ending {
        let arguments = try ActivityUpdateJobArguments(job.arguments)
        guard let app = try await store.app(job.appID) else {
            throw EngineError.notFound(resource: "app", id: "\(job.appID)")
        }
        // Held for the whole run: a key rotated meanwhile retires this client without closing it.
        let client = try await clients.holdClient(for: app, environment: arguments.environment)
        defer { Task { await clients.release(client) } }
        let work = try ActivityUpdateWork(
            store: store,
            job: job,
            arguments: arguments,
            bundleID: app.bundleID,
            budget: budget,
            clock: runner.clock
        )
        let machine = FanOutStateMachine(
            configuration: runner.configuration.fanOut,
            jobID: job.id,
            policy: PlainFanOutPolicy(),
            checkpoint: job.checkpoint.flatMap(Int64.init)
        )
        return try await runner.run(job, owner: owner, stop: stop, client: client, machine: machine, work: work)
    }
}

/// An activity-update job's audience, pushes and commits.
struct ActivityUpdateWork: FanOutWork {
    let store: any ActivityStore & AppStore
    let job: Job
    let arguments: ActivityUpdateJobArguments
    let budget: ActivityPriorityBudget
    let clock: any WallClock
    /// The job's push, encoded once: every activity gets the same bytes. Its timestamp is past
    /// every earlier one of the event (one sequence per event and environment: the channel's, or
    /// the event's own), and an activity already sent a newer one is left out.
    let template: APNSDevicePush

    init(
        store: any ActivityStore & AppStore,
        job: Job,
        arguments: ActivityUpdateJobArguments,
        bundleID: String,
        budget: ActivityPriorityBudget,
        clock: any WallClock
    ) throws {
        self.store = store
        self.job = job
        self.arguments = arguments
        self.budget = budget
        self.clock = clock
        template = try APNSDevicePush(
            deviceToken: "00",
            bundleID: bundleID,
            payload: ByteBuffer(bytes: JSONValue.object(arguments.payload).jsonBytes),
            priority: arguments.priority
        )
    }

    var query: ActivityUpdateQuery {
        ActivityUpdateQuery(
            appID: job.appID,
            eventID: arguments.eventID,
            environment: arguments.environment,
            sentBefore: arguments.timestamp
        )
    }

    func page(after cursor: Int64, limit: Int, machine: MachineBox) async throws -> FanOutPage? {
        let targets = try await store.updateAudiencePage(query, after: cursor, limit: limit)
        guard let last = targets.last else { return nil }
        // Each activity's priority is decided as its page is read, from its window as committed
        // so far; a retry keeps the decision.
        let now = clock.now
        let rows = targets.map { target in
            (
                rowID: target.rowID,
                token: target.token,
                priority: budget.decide(
                    requested: arguments.priority,
                    frequentPushesEnabled: target.frequentPushesEnabled,
                    window: target.priorityWindow,
                    now: now
                )
            )
        }
        let sends = machine.withLock { $0.pageRead(updateTokens: rows) }
        return FanOutPage(sends: sends, lastRow: last.rowID, isLast: targets.count < limit)
    }

    func push(for send: FanOutStateMachine.Send) throws -> APNSDevicePush {
        var push = try template.sending(to: send.token)
        if let priority = send.priority { push.priority = priority }
        return push
    }

    /// An update sent twice carries the same timestamp: the device drops the second.
    var reservesTokens: Bool { false }

    func commit(_ batch: FanOutStateMachine.Batch, commitID: UUID, owner: String) async throws {
        let accepted = batch.deliveries.filter { $0.outcome == .accepted }.map(\.tokenRowID)
        // A dead update token means the activity is over on the device; a 410 says so only for
        // the token the activity holds now and only if APNs saw it dead after its receipt (the
        // store judges that against the row), so those go as invalidations.
        let dead = batch.deliveries.filter { $0.outcome == .tokenInvalid }.map(\.tokenRowID)
            .filter { batch.invalidations[$0] == nil }
        let now = clock.now
        try await store.commitActivityUpdateBatch(
            ActivityUpdateBatch(
                appID: job.appID,
                jobID: job.id,
                leaseOwner: owner,
                timestamp: arguments.timestamp,
                accepted: accepted,
                ended: (arguments.event == .end ? accepted : []) + dead,
                invalidatedUpdateTokens: batch.invalidations,
                acceptedAtImmediate: batch.acceptedAtImmediate,
                priorityWindowsEndedAt: ActivityPriorityBudget.windowsEnded(at: now),
                progress: batch.progress,
                checkpoint: batch.checkpoint.map { String($0) },
                commitID: commitID
            ),
            at: now
        )
    }
}
