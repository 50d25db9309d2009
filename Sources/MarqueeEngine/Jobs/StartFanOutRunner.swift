import Foundation
import Logging
import MarqueeAPNS
import MarqueeCore
import NIOCore
import Synchronization

/// Runs one leased start job: streams its audience page by page into `APNSClient.send(pages:)`,
/// feeds the outcomes to `StartFanOutStateMachine` and does what it decides (commit a batch with
/// its checkpoint, retry after a delay, finish, or hand the job back). The I/O half of the fan-out,
/// and the worker's handler of `startFanOutPartition` jobs.
struct StartFanOutRunner: JobHandler {
    let store: any MarqueeStore
    let clients: APNSClientRegistry
    let configuration: JobWorkerConfiguration
    let clock: any WallClock
    let logger: Logger

    typealias Ending = JobEnding

    var kinds: Set<JobKind> { [.startFanOutPartition] }

    /// A fan-out that cannot work as given (its app gone, its arguments unreadable, APNs refusing
    /// the app) fails for good.
    func isPermanentFailure(_ error: any Error) -> Bool {
        error is EngineError || error is StartJobArguments.Unreadable
    }

    /// Runs the job until it is done, `stop` is raised (then in-flight sends are answered and
    /// committed before it returns), or its lease is lost (`StoreError.leaseLost`).
    func run(_ job: Job, owner: String, stop: RunStop) async throws -> Ending {
        let arguments = try StartJobArguments(job.arguments)
        guard let app = try await store.app(job.appID) else { throw EngineError.notFound(resource: "app", id: "\(job.appID)") }
        let client = try await clients.client(for: app, environment: arguments.environment)
        guard await clients.hold() else { throw EngineError.apnsUnavailable("the service is shutting down") }
        defer { Task { await clients.release() } }
        let templates = try StartTemplates(arguments: arguments, bundleID: app.bundleID)
        let machine = MachineBox(
            StartFanOutStateMachine(
                configuration: configuration.fanOut,
                jobID: job.id,
                hasChannel: arguments.apnsChannelID != nil,
                everyoneGetsUpdateToken: arguments.inputPushToken,
                checkpoint: job.checkpoint.flatMap(Int64.init)
            )
        )
        let context = Context(job: job, owner: owner, arguments: arguments, machine: machine, stop: stop)

        return try await withThrowingTaskGroup(of: Ending?.self) { group in
            group.addTask {
                // Keeps the lease while the job runs; a refused renewal (the job was cancelled or
                // taken over) stops the run.
                while true {
                    try await Task.sleep(for: configuration.leaseDuration / 3)
                    let held = try await store.renewJobLease(
                        id: job.id,
                        owner: owner,
                        now: clock.now,
                        leaseDuration: configuration.leaseDuration
                    )
                    if !held {
                        stop.raise()
                        return nil
                    }
                }
            }
            group.addTask {
                try await fanOut(context, client: client, templates: templates, stop: stop)
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
        var arguments: StartJobArguments
        var machine: MachineBox
        var stop: RunStop
    }

    private func fanOut(_ context: Context, client: APNSClient, templates: StartTemplates, stop: RunStop) async throws -> Ending {
        let query = context.arguments.audienceQuery(appID: context.job.appID, jobID: context.job.id)
        let pages = AudiencePushPages(
            store: store,
            query: query,
            cursor: context.job.checkpoint.flatMap(Int64.init) ?? 0,
            pageSize: configuration.pageSize,
            machine: context.machine,
            templates: templates,
            stop: stop
        )
        try await sendRound(context, client: client, pages: pages)
        while true {
            if stop.isRaised { return try await handBack(context, at: clock.now, why: "the worker stopped") }
            switch context.machine.withLock({ $0.nextStep(now: clock.now) }) {
            case .complete:
                try await store.completeJob(id: context.job.id, owner: context.owner, at: clock.now)
                // One line per partition, at info: which replica finished which part of a fan-out.
                logger.info(
                    "start partition completed",
                    metadata: [
                        "job.id": "\(context.job.id)",
                        "job.parent_id": "\(context.job.parentID.map { "\($0)" } ?? "")",
                        "job.owner": "\(context.owner)",
                    ]
                )
                return .completed
            case .rescheduleJob(let at):
                return try await handBack(context, at: at, why: "APNs asked to retry too many sends later")
            case .retry(let at):
                while clock.now < at && !stop.isRaised { try await Task.sleep(for: .milliseconds(50)) }
                if stop.isRaised { continue }
                // A job cancelled while its sends waited is noticed before the retries go out.
                guard try await store.renewJobLease(id: context.job.id, owner: context.owner, now: clock.now, leaseDuration: configuration.leaseDuration) else {
                    throw StoreError.leaseLost(context.job.id)
                }
                let due = context.machine.withLock { machine in
                    machine.beginRound()
                    return machine.retriesDue(now: clock.now)
                }
                let pushes = try due.map(templates.push)
                try await sendRound(context, client: client, pages: FixedPushPages(pages: pushes.isEmpty ? [] : [pushes]), beginRound: false)
            }
        }
    }

    /// Sends one round and commits its outcomes in batches as they come.
    private func sendRound<Pages: AsyncSequence & Sendable>(
        _ context: Context,
        client: APNSClient,
        pages: Pages,
        beginRound: Bool = true
    ) async throws where Pages.Element == [APNSDevicePush] {
        if beginRound { context.machine.withLock { $0.beginRound() } }
        var sourceError: (any Error)?
        do {
            for try await chunk in client.send(pages: pages, window: configuration.window) {
                let now = clock.now
                let batch = context.machine.withLock { machine -> StartFanOutStateMachine.Batch? in
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
                if let batch { try await commit(batch, context) }
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
        try await commit(last, context)
        if let sourceError { throw sourceError }
    }

    private func commit(_ batch: StartFanOutStateMachine.Batch, _ context: Context) async throws {
        guard !batch.isEmpty else { return }
        let now = clock.now
        try await store.commitDeliveryBatch(
            DeliveryBatch(
                appID: context.job.appID,
                jobID: context.job.id,
                leaseOwner: context.owner,
                deliveries: batch.deliveries,
                startedEventID: context.arguments.eventID,
                invalidations: batch.invalidations,
                progress: batch.progress,
                checkpoint: batch.checkpoint.map { String($0) }
            ),
            at: now
        )
        // Activities started with `input-push-token`: recorded as starting, so that the update
        // token the app reports is kept for them. A crash between the commit and these writes
        // loses the record, not the start; the app's report creates it then.
        for rowID in batch.startedWithUpdateToken {
            do {
                try await store.recordActivity(
                    Activity(
                        appID: context.job.appID,
                        eventID: context.arguments.eventID,
                        environment: context.arguments.environment,
                        pushToStartTokenRowID: rowID,
                        state: .starting,
                        createdAt: now
                    )
                )
            } catch {
                logger.debug("recording a starting activity failed", metadata: ["error": "\(String(reflecting: error))"])
            }
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
    private let machine: Mutex<StartFanOutStateMachine>

    init(_ machine: StartFanOutStateMachine) {
        self.machine = Mutex(machine)
    }

    func withLock<Result: Sendable>(_ body: (inout StartFanOutStateMachine) throws -> Result) rethrows -> Result {
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

/// The two start payloads of a job, encoded once; each device's push shares one of them.
struct StartTemplates: Sendable {
    let channel: APNSDevicePush?
    let updateToken: APNSDevicePush

    init(arguments: StartJobArguments, bundleID: String) throws {
        func template(_ updates: LiveActivityPayload.StartUpdates) throws -> APNSDevicePush {
            try APNSDevicePush(
                deviceToken: "00",
                bundleID: bundleID,
                payload: ByteBuffer(bytes: arguments.payload(updates: updates)),
                priority: .immediate
            )
        }
        channel = try arguments.apnsChannelID.map { try template(.channel($0)) }
        updateToken = try template(.updateToken)
    }

    func push(for send: StartFanOutStateMachine.Send) throws -> APNSDevicePush {
        switch send.kind {
        case .channel: try (channel ?? updateToken).sending(to: send.token)
        case .updateToken: try updateToken.sending(to: send.token)
        }
    }
}

/// The audience as pages of pushes, read from the store one page at a time (keyset, from the
/// checkpoint), each page registered with the state machine before it is handed to the client.
struct AudiencePushPages: AsyncSequence, Sendable {
    typealias Element = [APNSDevicePush]

    let store: any TokenStore
    let query: AudienceQuery
    let cursor: Int64
    let pageSize: Int
    let machine: MachineBox
    let templates: StartTemplates
    let stop: RunStop

    struct AsyncIterator: AsyncIteratorProtocol {
        let pages: AudiencePushPages
        var cursor: Int64
        var finished = false

        mutating func next() async throws -> [APNSDevicePush]? {
            while !finished {
                if pages.stop.isRaised || pages.machine.withLock({ $0.retryBacklogIsFull }) { return nil }
                let page = try await pages.store.audiencePage(pages.query, after: cursor, limit: pages.pageSize)
                if page.count < pages.pageSize { finished = true }
                guard let last = page.last else { return nil }
                cursor = last.rowID
                let sends = pages.machine.withLock { $0.pageRead(page) }
                let pushes = try sends.map(pages.templates.push)
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
