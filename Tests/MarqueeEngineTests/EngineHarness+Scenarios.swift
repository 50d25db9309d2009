import Foundation
import MarqueeCore
import MarqueeStorage
import MarqueeTesting
import Testing

@testable import MarqueeEngine

/// What the use-case suites set up and run through the harness: events, tokens, start jobs.
extension EngineHarness {
    /// A device's push-to-start token as hex, distinct per `number`.
    static func token(_ number: Int) -> String {
        String(format: "%064x", number + 0xABC0_0000)
    }

    /// Creates the event (and its channels at the fake APNs, unless its timeline creates them
    /// later) as a publisher's PUT does, planned to start in 10 minutes.
    @discardableResult
    func putEvent(
        _ key: String,
        environments: [APNSEnvironment] = [.sandbox, .production],
        timeline: EventTimelineSettings? = nil
    ) async throws -> EventView {
        let draft = EventDraft(
            title: "Final",
            attributesType: Self.attributesType,
            environments: environments,
            storagePolicy: nil,
            plannedStart: clock.now.addingTimeInterval(600),
            plannedEnd: clock.now.addingTimeInterval(7200),
            timeline: timeline
        )
        return try await events.put(app: app, key: key, draft: draft).view
    }

    /// A start of event `final` in the sandbox to `devices` tokens registered for it, enqueued, with
    /// nothing sent yet.
    func enqueuedStart(devices: Int) async throws -> (job: JobID, tokens: [String]) {
        try await putEvent("final")
        let tokens = (1...devices).map(Self.token)
        for token in tokens { try await register(token) }
        let view = try await starts.start(app: app, eventKey: "final", request: startRequest())
        return (view.job.id, tokens)
    }

    /// Event `final` started in the sandbox to an iOS 18 device (`recent`, on the event's channel)
    /// and an iOS 17.5 one (`older`, asked for an update token), every start sent.
    func startedOnChannelAndUpdateToken(
        environments: [APNSEnvironment] = [.sandbox, .production]
    ) async throws -> (event: EventView, recent: String, older: String) {
        let event = try await putEvent("final", environments: environments)
        let (recent, older) = (Self.token(1), Self.token(2))
        try await register(recent, iosVersion: "18.2")
        try await register(older, iosVersion: "17.5")
        _ = try await starts.start(app: app, eventKey: "final", request: startRequest())
        try await runStartParts()
        return (event, recent, older)
    }

    /// Registers a device's push-to-start token as the app does.
    func register(
        _ token: String,
        environment: APNSEnvironment = .sandbox,
        attributesType: String = EngineHarness.attributesType,
        iosVersion: String? = "18.2",
        userID: String? = nil,
        tags: [String] = []
    ) async throws {
        let registration = PushToStartRegistration(
            environment: environment,
            attributesType: attributesType,
            token: token,
            userID: userID,
            tags: tags,
            iosVersion: iosVersion
        )
        _ = try await tokens.register(app: app, [registration], pointerPrefix: "")
    }

    /// Registers devices' push-to-start tokens (iOS 18, sandbox) in one batch, as a relay does.
    func register(_ batch: [String]) async throws {
        let registrations = batch.map {
            PushToStartRegistration(
                environment: .sandbox,
                attributesType: Self.attributesType,
                token: $0,
                iosVersion: "18.2"
            )
        }
        _ = try await tokens.register(app: app, registrations, pointerPrefix: "/tokens")
    }

    /// A start request with the event's attributes and an alert.
    func startRequest(
        _ environment: APNSEnvironment = .sandbox,
        audience: StartAudience = StartAudience(),
        inputPushToken: Bool = false
    ) -> StartRequest {
        StartRequest(
            environment: environment,
            attributes: ["home": .string("Lyon")],
            contentState: ["score": .string("0-0")],
            alert: ["title": .string("Kick-off"), "body": .string("The final starts")],
            audience: audience,
            inputPushToken: inputPushToken
        )
    }

    /// Runs the due start parts while moving the clock on in small steps, so that sends APNs asked
    /// to retry later fall due, until `done` holds; then waits for the runs to end.
    func runStartParts(movingClockUntil what: String, _ done: @escaping @Sendable () -> Bool) async throws {
        let runs = Task { try await runStartParts() }
        try await waitUntil(what) {
            clock.advance(by: 0.05)
            return done()
        }
        _ = try await runs.value
    }

    /// Leases the due parts of start jobs and runs each to its end, as a job worker would, until
    /// none is due; the last part of a start finishes it. Returns how each run ended.
    @discardableResult
    func runStartParts(
        store: (any AppStore & DeliveryStore & TokenStore & JobStore)? = nil
    ) async throws
        -> [FanOutRunner.Ending]
    {
        let handler = startHandler(store: store)
        var endings: [FanOutRunner.Ending] = []
        while let job = try await leaseStartPart(owner: "worker-\(endings.count)") {
            let ending = try await handler.run(job, owner: job.lease?.owner ?? "", stop: RunStop())
            endings.append(ending)
            if ending == .completed, let parentID = job.parentID {
                _ = try await self.store.finishParentJob(id: parentID, at: clock.now)
            }
        }
        return endings
    }

    /// Leases the due jobs of `handler`'s kinds one at a time and runs each, as a job worker
    /// would, until none is due at the clock's time. Returns how each run ended.
    @discardableResult
    func runDueJobs(_ handler: some JobHandler) async throws -> [FanOutRunner.Ending] {
        var endings: [FanOutRunner.Ending] = []
        while let job = try await store.leaseJobs(
            owner: "worker",
            kinds: handler.kinds,
            now: clock.now,
            leaseDuration: runner.configuration.leaseDuration,
            limit: 1
        ).first {
            endings.append(try await handler.run(job, owner: "worker", stop: RunStop()))
        }
        return endings
    }

    /// Moves the clock to `date` and performs the schedules due then; returns how many ran.
    @discardableResult
    func runSchedules(at date: Date) async throws -> Int {
        clock.set(to: date)
        return try await runDueJobs(scheduleRunner).count
    }

    /// Leases the start's part for `owner` and runs it on `store` (the harness's by default) in a
    /// task of its own, as a worker would.
    func runningStartPart(
        owner: String = "worker-a",
        store: (any AppStore & DeliveryStore & TokenStore & JobStore)? = nil
    ) async throws -> (part: Job, run: Task<FanOutRunner.Ending, any Error>) {
        let part = try #require(try await leaseStartPart(owner: owner))
        let handler = startHandler(store: store)
        return (part, Task { try await handler.run(part, owner: owner, stop: RunStop()) })
    }

    /// The lease of a run that ended without giving it up lapses; the parts then run from their
    /// checkpoints until none is due (`runStartParts`).
    func runStartPartsOnceTheLeaseLapses() async throws -> [FanOutRunner.Ending] {
        clock.advance(by: runner.configuration.leaseDuration.timeInterval + 1)
        return try await runStartParts()
    }

    /// One due start part, leased by `owner`.
    func leaseStartPart(owner: String) async throws -> Job? {
        try await store.leaseJobs(
            owner: owner,
            kinds: [.startFanOutPartition],
            now: clock.now,
            leaseDuration: runner.configuration.leaseDuration,
            limit: 1
        ).first
    }

    /// The deliveries of the start job's parts: every outcome but the accepted starts.
    func deliveries(of jobID: JobID) async throws -> [Delivery] {
        var all: [Delivery] = []
        for part in try await store.childJobs(appID: app.id, parentID: jobID) {
            all += try await store.deliveries(appID: app.id, jobID: part.id)
        }
        return all
    }

    /// Each token's outcome in the start job: accepted if the event's start ledger has it from one
    /// of the job's parts, else its last delivery's outcome (the ledger holds accepted starts, the
    /// deliveries everything else); tokens with neither are left out.
    func outcomes(of jobID: JobID, tokens: [String]) async throws -> [String: DeliveryOutcome] {
        let parts = try await store.childJobs(appID: app.id, parentID: jobID)
        var byRow: [Int64: DeliveryOutcome] = [:]
        for delivery in try await deliveries(of: jobID).sorted(by: { $0.attempt < $1.attempt }) {
            byRow[delivery.tokenRowID] = delivery.outcome
        }
        var rows: [String: Int64] = [:]
        for token in tokens { rows[token] = try await storedToken(token).rowID }
        let eventID = try StartJobArguments(try await job(jobID).arguments).eventID
        let partIDs = Set(parts.map(\.id))
        let ledger = try await store.startRecords(appID: app.id, eventID: eventID, among: Array(rows.values))
        for record in ledger where record.jobID.map(partIDs.contains) == true { byRow[record.tokenRowID] = .accepted }
        return rows.compactMapValues { byRow[$0] }
    }

    /// The token's row as the registry has it.
    func storedToken(_ token: String, environment: APNSEnvironment = .sandbox) async throws -> PushToStartToken {
        try await tokens.token(app: app, environment: environment, attributesType: Self.attributesType, token: token)
    }

    /// The job as stored now, with its parts' progress (as the API shows it).
    func job(_ id: JobID) async throws -> Job {
        guard let job = try await store.job(appID: app.id, id: id) else { throw TestSetupError("no job \(id)") }
        return job.combined(with: try await store.childJobs(appID: app.id, parentID: id))
    }
}
