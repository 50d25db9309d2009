import Foundation
import MarqueeAPNS
import MarqueeCore
import NIOCore

/// Runs a start job's partitions: the event's start to each push-to-start token of the
/// partition's audience, once (the start ledger), through `FanOutRunner`.
struct StartFanOutHandler: JobHandler {
    let store: any AppStore & DeliveryStore & TokenStore
    let clients: APNSClientRegistry
    let runner: FanOutRunner

    var kinds: Set<JobKind> { [.startFanOutPartition] }

    func run(_ job: Job, owner: String, stop: RunStop) async throws -> FanOutRunner.Ending {
        let arguments: StartJobArguments
        do {
            arguments = try StartJobArguments(job.arguments)
        } catch {
            throw JobFailure(description: "\(error)")
        }
        guard let app = try await store.app(job.appID) else {
            throw EngineError.notFound(resource: "app", id: "\(job.appID)")
        }
        // Held for the whole run: a key rotated meanwhile retires this client without closing it.
        let client = try await clients.holdClient(for: app, environment: arguments.environment)
        defer { Task { await clients.release(client) } }
        let work = StartFanOutWork(
            store: store,
            job: job,
            arguments: arguments,
            templates: try StartTemplates(
                arguments: arguments,
                bundleID: app.bundleID,
                collapseID: runner.configuration.startCollapseIDs ? StartCollapseID.value(for: arguments.eventID) : nil
            ),
            clock: runner.clock,
            policy: StartOutcomePolicy(
                hasChannel: arguments.apnsChannelID != nil,
                everyoneGetsUpdateToken: arguments.inputPushToken,
                uncertainStarts: runner.configuration.uncertainStarts
            )
        )
        let machine = FanOutStateMachine(
            configuration: runner.configuration.fanOut,
            jobID: job.id,
            policy: work.policy,
            checkpoint: job.checkpoint.flatMap(Int64.init)
        )
        return try await runner.run(job, owner: owner, stop: stop, client: client, machine: machine, work: work)
    }
}

/// A start partition's audience, pushes and commits.
struct StartFanOutWork: FanOutWork {
    let store: any AppStore & DeliveryStore & TokenStore
    let job: Job
    let arguments: StartJobArguments
    let templates: StartTemplates
    let clock: any WallClock
    let policy: StartOutcomePolicy

    func page(after cursor: Int64, limit: Int, machine: MachineBox) async throws -> FanOutPage? {
        // Leasing counts the job's runs: past the first, an earlier run may have finished tokens.
        let query = arguments.audienceQuery(appID: job.appID, jobID: job.id, afterEarlierRuns: job.attempts > 1)
        let recipients = try await store.audienceRecipients(query, after: cursor, limit: limit)
        guard let last = recipients.last else { return nil }
        // The crash window: what an earlier run handed out (through its reservation).
        let page = policy.page(recipients, crashWindowEnd: job.attempts > 1 ? job.reservedThrough : nil)
        let now = clock.now
        let sends = machine.withLock { machine in
            if !page.uncertain.isEmpty { machine.uncertainUnsent(page.uncertain, now: now) }
            return machine.pageRead(page.rows)
        }
        return FanOutPage(sends: sends, lastRow: last.rowID, isLast: recipients.count < limit)
    }

    func push(for send: FanOutStateMachine.Send) throws -> APNSDevicePush {
        try templates.push(for: send)
    }

    /// A second start is a second Live Activity.
    var reservesTokens: Bool { true }
    func alreadyStarted(among tokenRowIDs: [Int64]) async throws -> Set<Int64> {
        guard !tokenRowIDs.isEmpty else { return [] }
        return try await store.startedTokens(appID: job.appID, eventID: arguments.eventID, among: tokenRowIDs)
    }

    func commit(_ batch: FanOutStateMachine.Batch, commitID: UUID, owner: String) async throws {
        try await store.commitDeliveryBatch(
            DeliveryBatch(
                appID: job.appID,
                jobID: job.id,
                leaseOwner: owner,
                deliveries: batch.deliveries,
                startedEventID: arguments.eventID,
                startingActivities: batch.startedWithUpdateToken.isEmpty
                    ? nil
                    : StartingActivities(
                        environment: arguments.environment,
                        lastTimestampSent: arguments.timestamp,
                        pushToStartTokenRowIDs: batch.startedWithUpdateToken
                    ),
                invalidations: batch.invalidations,
                progress: batch.progress,
                checkpoint: batch.checkpoint.map { String($0) },
                commitID: commitID
            ),
            at: clock.now
        )
    }
}

/// The two start payloads of a job, encoded once; each device's push shares one of them.
struct StartTemplates: Sendable {
    let channel: APNSDevicePush?
    let updateToken: APNSDevicePush

    /// `collapseID`: the event's (`StartCollapseID`), or `nil` for none.
    init(arguments: StartJobArguments, bundleID: String, collapseID: String?) throws {
        func template(_ updates: LiveActivityPayload.StartUpdates) throws -> APNSDevicePush {
            try APNSDevicePush(
                deviceToken: "00",
                bundleID: bundleID,
                payload: ByteBuffer(bytes: arguments.payload(updates: updates)),
                priority: .immediate,
                collapseID: collapseID
            )
        }
        channel = try arguments.apnsChannelID.map { try template(.channel($0)) }
        updateToken = try template(.updateToken)
    }

    func push(for send: FanOutStateMachine.Send) throws -> APNSDevicePush {
        switch send.kind {
        case .channel: try (channel ?? updateToken).sending(to: send.token)
        case .updateToken: try updateToken.sending(to: send.token)
        }
    }
}
