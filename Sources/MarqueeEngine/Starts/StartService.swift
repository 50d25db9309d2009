import Foundation
import Logging
import MarqueeCore

/// Starting an event's Live Activity on its audience's devices, as a durable job, and the jobs'
/// progress, listing and cancellation.
public struct StartService: Sendable {
    let store:
        any ActivityStore & AppStore & ChannelStore & DeliveryStore & EventStore & JobStore & PendingStartStore
            & StartConfirmationStore & TokenStore
    let wakeup: JobWakeup
    /// Parts a fan-out is split into at most (`JobWorkerConfiguration.partitions`), and the page
    /// size that decides how many a small audience gets.
    let partitions: Int
    let pageSize: Int
    /// Whether each start job gets a confirmation job (`jobs.uncertainStarts=confirm`), enqueued
    /// with it, which asks the devices whose start ends uncertain.
    var confirmsStarts: Bool = false
    let clock: any WallClock
    let logger: Logger

    /// The most tokens, user IDs or tags an audience may name.
    public static let maximumAudienceList = 10_000

    /// Validates the request and enqueues the start job; the job worker sends it.
    public func start(app: App, eventKey: String, request: StartRequest) async throws -> JobView {
        try await start(app: app, eventKey: eventKey, request: request, jobID: JobID())
    }

    /// Validates the request and enqueues the start as job `jobID`, once: when that job exists (an
    /// earlier attempt of the same schedule enqueued it, then stopped before recording it), it is
    /// answered and nothing is enqueued again. With `uncertainOf`, the audience is only the tokens
    /// whose start ended uncertain in that job (`resendUncertain`).
    func start(
        app: App,
        eventKey: String,
        request: StartRequest,
        jobID: JobID,
        uncertainOf: JobID? = nil
    ) async throws -> JobView {
        if let existing = try await store.job(appID: app.id, id: jobID) {
            return try await view(app: app, job: existing)
        }
        let event = try await checkedEvent(app: app, eventKey: eventKey, environment: request.environment)
        try Self.check(request)
        let channel = try await store.liveChannel(appID: app.id, eventID: event.id, environment: request.environment)
        let active = channel.flatMap { $0.state == .active ? $0 : nil }
        let now = clock.now
        var arguments = Self.arguments(
            eventID: event.id,
            attributesType: event.attributesType,
            request: request,
            channel: active,
            timestamp: try await startTimestamp(
                app: app,
                event: event,
                environment: request.environment,
                channel: active
            )
        )
        arguments.uncertainOf = uncertainOf
        try Self.checkSize(arguments)
        let extent = try await store.audienceExtent(
            arguments.audienceQuery(appID: app.id, jobID: jobID, afterEarlierRuns: false)
        )
        let total = extent.count
        if let uncertainOf, total == 0 {
            throw EngineError.jobConflict(
                "every uncertain token of job \(uncertainOf) has started since (or is gone): there is nothing to resend"
            )
        }
        let jobs = startJobs(appID: app.id, jobID: jobID, arguments: arguments, extent: extent, at: now)
        do {
            try await store.enqueueJobs(jobs)
        } catch {
            // Another attempt with the same ID got there first (the job and its parts go in
            // together or not at all).
            guard let existing = try await store.job(appID: app.id, id: jobID) else { throw error }
            return try await view(app: app, job: existing)
        }
        wakeup.signal()
        logger.debug(
            "start job enqueued",
            metadata: [
                "job.id": "\(jobID.publicID)", "event.key": "\(eventKey)", "job.total": "\(total)",
                "job.partitions": "\(jobs.filter { $0.kind == .startFanOutPartition }.count)",
            ]
        )
        // What its late joiners get: after the job exists, which the offer names. A resend of
        // uncertain tokens is no start of its own and leaves the offer alone.
        if uncertainOf == nil, let offer = LateJoinPolicy.offer(for: request, event: event, jobID: jobID, at: now) {
            try await store.recordLateJoinOffer(offer)
        }
        return try await view(app: app, job: jobs[0])
    }

    /// A start job and its parts (first the job the API shows), enough parts for replicas to share
    /// the audience `extent`. The parts carry the event's serial key: they run beside each other,
    /// but after every other start of the event that came first, and before any that comes later
    /// (audiences are read less the start ledger, which only a finished start has written whole).
    func startJobs(
        appID: AppID,
        jobID: JobID,
        arguments: StartJobArguments,
        extent: AudienceExtent,
        at now: Date
    ) -> [Job] {
        let job = Job(
            id: jobID,
            appID: appID,
            kind: .startFanOut,
            arguments: arguments.jsonValue,
            dueAt: now,
            progress: JobProgress(total: extent.count),
            createdAt: now
        )
        let parts = Self.partitions(of: extent, pageSize: pageSize, limit: partitions).map { partition in
            var part = arguments
            part.partition = partition
            return Job(
                appID: appID,
                kind: .startFanOutPartition,
                parentID: jobID,
                arguments: part.jsonValue,
                dueAt: now,
                serialKey: JobSerialKey.start(of: arguments.eventID),
                createdAt: now
            )
        }
        guard confirmsStarts else { return [job] + parts }
        // Enqueued with the start in one transaction: it waits for the start to finish, then asks.
        let confirmation = Job(
            appID: appID,
            kind: .confirmStarts,
            arguments: ConfirmationJobArguments(
                startJobID: jobID,
                eventID: arguments.eventID,
                environment: arguments.environment
            ).jsonValue,
            dueAt: now,
            createdAt: now
        )
        return [job] + parts + [confirmation]
    }

    /// Checks a start as `start` would, enqueuing nothing: what a start scheduled for later is
    /// checked against when it is scheduled, so that a bad request is refused then, not when it
    /// is due. The event's channel may not exist yet: the payload's size is checked with an APNs
    /// channel ID of the length APNs gives them.
    func validate(app: App, eventKey: String, request: StartRequest) async throws -> Event {
        let event = try await checkedEvent(app: app, eventKey: eventKey, environment: request.environment)
        try Self.check(request)
        let channel = try await store.liveChannel(appID: app.id, eventID: event.id, environment: request.environment)
        let active = channel.flatMap { $0.state == .active ? $0 : nil }
        // The timestamp is not taken from the event's sequence: its size is what matters here.
        var arguments = Self.arguments(
            eventID: event.id,
            attributesType: event.attributesType,
            request: request,
            channel: active,
            timestamp: clock.unixSeconds
        )
        if arguments.apnsChannelID == nil {
            arguments.apnsChannelID = String(repeating: "A", count: Self.apnsChannelIDLength)
        }
        try Self.checkSize(arguments)
        return event
    }

    /// The length of the channel IDs APNs makes (24 characters of base64, `apns-reference.md` §6a).
    static let apnsChannelIDLength = 24

    /// The event, if a start in `environment` may be sent to it.
    func checkedEvent(app: App, eventKey: String, environment: APNSEnvironment) async throws -> Event {
        if let error = EventKeyRule.check(eventKey) { throw EngineError.invalidInput([error]) }
        guard let event = try await store.event(appID: app.id, externalKey: eventKey) else {
            throw EngineError.notFound(resource: "event", id: eventKey)
        }
        guard event.state == .scheduled || event.state == .live else {
            throw EngineError.conflict(
                """
                event \(eventKey) is \(event.state.rawValue): its activities cannot be started; create a new \
                event with another key and start that
                """
            )
        }
        guard app.environments.contains(environment) else { throw EngineError.environmentNotEnabled(environment) }
        guard event.environments.contains(environment) else {
            throw EngineError.invalidInput([
                FieldError("/environment", "event \(eventKey) has no \(environment.rawValue) environment")
            ])
        }
        guard app.signingKeyID != nil else {
            throw EngineError.appNotConfigured(
                "the app has no APNs signing key: upload its .p8 with PUT /v1/apps/{appID}/signing-key"
            )
        }
        return event
    }

    /// The request's own fields: the audience's lists and the alert a start needs.
    static func check(_ request: StartRequest, pointerPrefix: String = "") throws(EngineError) {
        var errors = audienceErrors(request.audience, pointerPrefix: pointerPrefix)
        errors += LateJoinPolicy.errors(in: request, pointerPrefix: pointerPrefix)
        if request.alert.isEmpty {
            errors.append(FieldError("\(pointerPrefix)/alert", "a start needs an alert (title and body)"))
        }
        var strings = InputValidation()
        strings.rejectNUL(in: request.attributes, "\(pointerPrefix)/attributes")
        strings.rejectNUL(in: request.contentState, "\(pointerPrefix)/contentState")
        strings.rejectNUL(in: request.alert, "\(pointerPrefix)/alert")
        if let alert = request.lateJoiners.alert { strings.rejectNUL(in: alert, "\(pointerPrefix)/lateJoiners/alert") }
        errors += strings.errors
        guard errors.isEmpty else { throw .invalidInput(errors) }
    }

    /// What is wrong with an audience (a start's, or one whose size is asked): lists too long,
    /// tokens that are not hex.
    static func audienceErrors(_ audience: StartAudience, pointerPrefix: String = "") -> [FieldError] {
        var errors: [FieldError] = []
        for (name, list) in [("tags", audience.tags), ("userIDs", audience.userIDs), ("tokens", audience.tokens)]
        where list.count > Self.maximumAudienceList {
            errors.append(
                FieldError("\(pointerPrefix)/audience/\(name)", "at most \(Self.maximumAudienceList) entries")
            )
        }
        for (index, token) in audience.tokens.enumerated() where !Hex.isHex(token) || token.isEmpty {
            errors.append(FieldError("\(pointerPrefix)/audience/tokens/\(index)", "must be the token as hex"))
        }
        return errors
    }

    static func arguments(
        eventID: EventID,
        attributesType: String,
        request: StartRequest,
        channel: BroadcastChannel?,
        timestamp: Int64
    ) -> StartJobArguments {
        StartJobArguments(
            eventID: eventID,
            environment: request.environment,
            attributesType: attributesType,
            attributes: request.attributes,
            contentState: request.contentState,
            alert: request.alert,
            audience: request.audience,
            inputPushToken: request.inputPushToken,
            apnsChannelID: channel?.apnsChannelID,
            channelID: channel?.id,
            timestamp: timestamp
        )
    }

    /// Refuses a start whose payload is over APNs' limit in either of its forms.
    static func checkSize(_ arguments: StartJobArguments, pointerPrefix: String = "") throws(EngineError) {
        for updates in [LiveActivityPayload.StartUpdates.updateToken]
            + (arguments.apnsChannelID.map { [.channel($0)] } ?? [])
        {
            let size = arguments.payload(updates: updates).count
            if size > APNSPayloadLimit.device {
                throw .invalidInput([
                    FieldError(
                        "\(pointerPrefix)/contentState",
                        "the start payload is \(size) bytes, over APNs' \(APNSPayloadLimit.device)"
                    )
                ])
            }
        }
    }

    /// The start's `aps.timestamp`: taken from the event's sequence in the environment (its
    /// channel's, when it has one), so that the next update is strictly later (a device drops an
    /// update no newer than its start, and a start and a broadcast in the same second would
    /// collide).
    func startTimestamp(
        app: App,
        event: Event,
        environment: APNSEnvironment,
        channel: BroadcastChannel?
    ) async throws -> Int64 {
        guard let channel else {
            return try await store.nextEventTimestamp(
                appID: app.id,
                eventID: event.id,
                environment: environment,
                now: clock.unixSeconds
            )
        }
        return try await store.nextBroadcastTimestamp(appID: app.id, channelID: channel.id, now: clock.unixSeconds)
    }

    /// Enough parts for replicas to share the work, none smaller than a page: ranges of the
    /// audience's row IDs. An empty audience still gets one part, which finds nothing (and reaches
    /// any token registered meanwhile, as every last part does).
    static func partitions(of audience: AudienceExtent, pageSize: Int, limit: Int) -> [AudiencePartition] {
        guard let rowIDs = audience.rowIDs else { return [AudiencePartition(afterRowID: nil, throughRowID: nil)] }
        let pages = (audience.count + Int64(pageSize) - 1) / Int64(max(1, pageSize))
        return AudiencePartition.split(rowIDs: rowIDs, into: Int(max(1, min(Int64(limit), pages))))
    }

    /// The kinds of job the jobs API lists: starts and the activity updates of broadcasts. A
    /// schedule's job is internal (`/v1/schedules` shows the schedule).
    static let listedKinds: Set<JobKind> = [.startFanOut, .activityUpdate]

    public func job(app: App, id: JobID) async throws -> JobView {
        guard let job = try await store.job(appID: app.id, id: id), job.kind != .schedule else {
            throw EngineError.notFound(resource: "job", id: id.publicID)
        }
        return try await view(app: app, job: job)
    }

    /// The app's jobs, newest first.
    public func jobs(app: App, before: JobListPosition?, limit: Int) async throws -> [JobView] {
        var views: [JobView] = []
        for job in try await store.jobs(appID: app.id, kinds: Self.listedKinds, before: before, limit: limit) {
            views.append(try await view(app: app, job: job, withFailures: false))
        }
        return views
    }

    /// Cancels the job; a running fan-out stops at its next commit or lease renewal. A finished job
    /// is a conflict.
    public func cancel(app: App, id: JobID) async throws -> JobView {
        // Only the jobs this API shows: a schedule's job is cancelled with its schedule.
        _ = try await job(app: app, id: id)
        let cancelled = try await store.cancelJob(appID: app.id, id: id, at: clock.now)
        let view = try await job(app: app, id: id)
        if !cancelled && view.job.state != .cancelled {
            throw EngineError.conflict(
                "job \(id.publicID) has \(view.job.state.rawValue): it is finished, so there is nothing left to cancel"
            )
        }
        return view
    }

    /// Snapshots of the job whenever its progress changes, every `interval` at most, ending with
    /// the snapshot of its final state.
    public func progress(
        app: App,
        id: JobID,
        interval: Duration = .milliseconds(250)
    ) async throws -> AsyncThrowingStream<JobView, any Error> {
        let first = try await job(app: app, id: id)
        return AsyncThrowingStream { continuation in
            let task = Task {
                var last = first
                continuation.yield(first)
                do {
                    while !last.job.state.isFinished {
                        try await clock.sleep(for: interval)
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

    func view(app: App, job: Job, withFailures: Bool = true) async throws -> JobView {
        var eventKey: String?
        var environment: APNSEnvironment?
        var lateJoiners = false
        if job.kind == .startFanOut, let arguments = try? StartJobArguments(job.arguments) {
            eventKey = try await store.event(appID: app.id, id: arguments.eventID)?.externalKey
            environment = arguments.environment
            lateJoiners = arguments.lateJoin
        } else if job.kind == .activityUpdate, let arguments = try? ActivityUpdateJobArguments(job.arguments) {
            eventKey = try await store.event(appID: app.id, id: arguments.eventID)?.externalKey
            environment = arguments.environment
        }
        let parts = try await store.childJobs(appID: app.id, parentID: job.id)
        var failures: [DeliveryCount] = []
        if withFailures {
            failures = try await store.deliveryCounts(appID: app.id, jobIDs: [job.id] + parts.map(\.id)).filter {
                $0.outcome != .accepted && $0.outcome != .uncertain
            }
        }
        var view = JobView(
            job: job.combined(with: parts),
            eventKey: eventKey,
            environment: environment,
            failures: DeliveryCount.merged(failures),
            at: clock.now
        )
        view.lateJoiners = lateJoiners
        if confirmsStarts, job.kind == .startFanOut {
            view.confirmation = try await store.confirmationCounts(appID: app.id, jobID: job.id)
        }
        return view
    }
}
