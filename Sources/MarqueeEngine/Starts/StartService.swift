import Foundation
import Logging
import MarqueeCore

/// Starting an event's Live Activity on its audience's devices, as a durable job, and the jobs'
/// progress, listing and cancellation.
public struct StartService: Sendable {
    let store: any MarqueeStore
    let wakeup: JobWakeup
    /// Parts a fan-out is split into at most (`JobWorkerConfiguration.partitions`), and the page
    /// size that decides how many a small audience gets.
    let partitions: Int
    let pageSize: Int
    let clock: any WallClock
    let logger: Logger

    /// The most tokens, user IDs or tags an audience may name.
    public static let maximumAudienceList = 10_000

    /// Validates the request and enqueues the start job; the job worker sends it.
    public func start(app: App, eventKey: String, request: StartRequest) async throws -> JobView {
        if let error = EventKeyRule.check(eventKey) { throw EngineError.invalidInput([error]) }
        guard let event = try await store.event(appID: app.id, externalKey: eventKey) else {
            throw EngineError.notFound(resource: "event", id: eventKey)
        }
        guard event.state == .scheduled || event.state == .live else {
            throw EngineError.conflict("event \(eventKey) is \(event.state.rawValue): its activities cannot be started")
        }
        guard app.environments.contains(request.environment) else { throw EngineError.environmentNotEnabled(request.environment) }
        guard event.environments.contains(request.environment) else {
            throw EngineError.invalidInput([FieldError("/environment", "event \(eventKey) has no \(request.environment.rawValue) environment")])
        }
        guard app.signingKeyID != nil else {
            throw EngineError.appNotConfigured("the app has no APNs signing key: upload its .p8 with PUT /v1/apps/{appID}/signing-key")
        }
        var errors: [FieldError] = []
        for (name, list) in [("tags", request.audience.tags), ("userIDs", request.audience.userIDs), ("tokens", request.audience.tokens)]
        where list.count > Self.maximumAudienceList {
            errors.append(FieldError("/audience/\(name)", "at most \(Self.maximumAudienceList) entries"))
        }
        for (index, token) in request.audience.tokens.enumerated() where !Hex.isHex(token) || token.isEmpty {
            errors.append(FieldError("/audience/tokens/\(index)", "must be the token as hex"))
        }
        if request.alert.isEmpty { errors.append(FieldError("/alert", "a start needs an alert (title and body)")) }
        guard errors.isEmpty else { throw EngineError.invalidInput(errors) }

        let channel = try await store.liveChannel(appID: app.id, eventID: event.id, environment: request.environment)
        let active = channel.flatMap { $0.state == .active ? $0 : nil }
        let now = clock.now
        let arguments = StartJobArguments(
            eventID: event.id,
            environment: request.environment,
            attributesType: event.attributesType,
            attributes: request.attributes,
            contentState: request.contentState,
            alert: request.alert,
            audience: request.audience,
            inputPushToken: request.inputPushToken,
            apnsChannelID: active?.apnsChannelID,
            channelID: active?.id,
            timestamp: try await startTimestamp(app: app, event: event, environment: request.environment, channel: active)
        )
        for updates in [LiveActivityPayload.StartUpdates.updateToken] + (arguments.apnsChannelID.map { [.channel($0)] } ?? []) {
            let size = arguments.payload(updates: updates).count
            if size > APNSPayloadLimit.device {
                throw EngineError.invalidInput([
                    FieldError("/contentState", "the start payload is \(size) bytes, over APNs' \(APNSPayloadLimit.device)")
                ])
            }
        }
        let jobID = JobID()
        let total = try await store.audienceCount(arguments.audienceQuery(appID: app.id, jobID: jobID))
        let job = Job(
            id: jobID,
            appID: app.id,
            kind: .startFanOut,
            arguments: arguments.jsonValue,
            dueAt: now,
            progress: JobProgress(total: total),
            createdAt: now
        )
        let count = Self.partitionCount(audience: total, pageSize: pageSize, limit: partitions)
        let parts = (0..<count).map { index in
            var part = arguments
            part.partition = AudiencePartition(index: index, count: count)
            return Job(appID: app.id, kind: .startFanOutPartition, parentID: jobID, arguments: part.jsonValue, dueAt: now, createdAt: now)
        }
        try await store.enqueueJobs([job] + parts)
        wakeup.signal()
        logger.debug(
            "start job enqueued",
            metadata: ["job.id": "\(jobID)", "event.key": "\(eventKey)", "job.total": "\(total)", "job.partitions": "\(count)"]
        )
        return try await view(app: app, job: job)
    }

    /// The start's `aps.timestamp`: taken from the event's sequence in the environment (its
    /// channel's, when it has one), so that the next update is strictly later (a device drops an
    /// update no newer than its start, and a start and a broadcast in the same second would
    /// collide).
    private func startTimestamp(app: App, event: Event, environment: APNSEnvironment, channel: BroadcastChannel?) async throws -> Int64 {
        guard let channel else {
            return try await store.nextEventTimestamp(appID: app.id, eventID: event.id, environment: environment, now: clock.unixSeconds)
        }
        return try await store.nextBroadcastTimestamp(appID: app.id, channelID: channel.id, now: clock.unixSeconds)
    }

    /// Enough parts for replicas to share the work, none smaller than a page.
    static func partitionCount(audience: Int64, pageSize: Int, limit: Int) -> Int {
        let pages = (audience + Int64(pageSize) - 1) / Int64(max(1, pageSize))
        return Int(max(1, min(Int64(limit), pages)))
    }

    public func job(app: App, id: JobID) async throws -> JobView {
        guard let job = try await store.job(appID: app.id, id: id) else { throw EngineError.notFound(resource: "job", id: "\(id)") }
        return try await view(app: app, job: job)
    }

    /// The app's jobs, newest first.
    public func jobs(app: App, before: JobListPosition?, limit: Int) async throws -> [JobView] {
        var views: [JobView] = []
        for job in try await store.jobs(appID: app.id, kinds: nil, before: before, limit: limit) {
            views.append(try await view(app: app, job: job, withFailures: false))
        }
        return views
    }

    /// Cancels the job; a running fan-out stops at its next commit or lease renewal. A finished job
    /// is a conflict.
    public func cancel(app: App, id: JobID) async throws -> JobView {
        let cancelled = try await store.cancelJob(appID: app.id, id: id, at: clock.now)
        let view = try await job(app: app, id: id)
        if !cancelled && view.job.state != .cancelled {
            throw EngineError.conflict("job \(id) has \(view.job.state.rawValue); only pending or running jobs can be cancelled")
        }
        return view
    }

    /// Snapshots of the job whenever its progress changes, every `interval` at most, ending with
    /// the snapshot of its final state.
    public func progress(app: App, id: JobID, interval: Duration = .milliseconds(250)) async throws -> AsyncThrowingStream<JobView, any Error> {
        let first = try await job(app: app, id: id)
        return AsyncThrowingStream { continuation in
            let task = Task {
                var last = first
                continuation.yield(first)
                do {
                    while !last.job.state.isFinished {
                        try await Task.sleep(for: interval)
                        let next = try await job(app: app, id: id)
                        if next.job.progress != last.job.progress || next.job.state != last.job.state {
                            continuation.yield(next)
                        }
                        last = next
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    private func view(app: App, job: Job, withFailures: Bool = true) async throws -> JobView {
        var eventKey: String?
        var environment: APNSEnvironment?
        if job.kind == .startFanOut, let arguments = try? StartJobArguments(job.arguments) {
            eventKey = try await store.event(appID: app.id, id: arguments.eventID)?.externalKey
            environment = arguments.environment
        } else if job.kind == .activityUpdate, let arguments = try? ActivityUpdateJobArguments(job.arguments) {
            eventKey = try await store.event(appID: app.id, id: arguments.eventID)?.externalKey
            environment = arguments.environment
        }
        let parts = try await store.childJobs(appID: app.id, parentID: job.id)
        var failures: [DeliveryCount] = []
        if withFailures {
            for id in [job.id] + parts.map(\.id) {
                failures += try await store.deliveryCounts(appID: app.id, jobID: id).filter { $0.outcome != .accepted }
            }
        }
        return JobView(job: job.combined(with: parts), eventKey: eventKey, environment: environment, failures: DeliveryCount.merged(failures), at: clock.now)
    }
}
