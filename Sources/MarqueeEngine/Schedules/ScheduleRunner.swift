import Foundation
import Logging
import MarqueeCore

/// Performs schedules when they are due: the job worker's handler of `JobKind.schedule` jobs. A
/// producer's schedule is performed exactly as the immediate call would do it, through
/// `StartService` and `BroadcastService`; a timeline step checks `EventTimeline.decision` first
/// (an end someone else sent is not sent again) and then creates the channels, starts, ends or
/// closes the event.
///
/// Exactly once across restarts and replicas: only the worker holding the job's lease runs it,
/// and a worker that stops mid-way is replaced once its lease lapses. The replacement begins the
/// schedule again (`ScheduleStore.beginSchedule` allows running → running), so every action is
/// idempotent on the schedule's ID:
/// - a start enqueues its job under an ID derived from the schedule's (`JobID(startOf:environment:)`):
///   a second run finds that job and enqueues nothing;
/// - a broadcast logs each channel's request before sending it, once per schedule and channel
///   (`BroadcastLogStore.appendScheduledBroadcastLog`): a second run finds the row and does not
///   send again (a request that was in flight is reported unknown, never repeated);
/// - creating channels and closing the event are idempotent by nature (`ChannelLifecycle` keeps
///   one live channel per event and environment; closing a closed event changes nothing).
/// The outcome is recorded on the schedule (running → succeeded, failed or skipped) before the job
/// is completed; a worker that finds the schedule finished only completes the job.
struct ScheduleRunner: JobHandler {
    let store: any AppStore & BroadcastLogStore & EventStore & JobStore & ScheduleStore
    let starts: StartService
    let broadcasts: BroadcastService
    let events: EventService
    let channels: ChannelLifecycle
    let timeline: TimelinePlanner
    let configuration: JobWorkerConfiguration
    let clock: any WallClock
    let logger: Logger

    var kinds: Set<JobKind> { [.schedule] }

    /// Trying again later may work: the worker retries errors that are neither an `EngineError` nor
    /// a `JobFailure`, and APNs being unreachable is an `EngineError` that is worth a retry.
    struct RetryLater: Error, CustomStringConvertible {
        var underlying: EngineError
        var description: String { underlying.description }
    }

    func run(_ job: Job, owner: String, stop: RunStop) async throws -> FanOutRunner.Ending {
        do {
            return try await runOnce(job, owner: owner)
        } catch let error where !(error is StoreError) && job.attempts >= configuration.maximumJobAttempts {
            // The worker gives the job up after this attempt: the schedule says so too, rather than
            // staying `running`.
            _ = try? await store.finishSchedule(
                appID: job.appID,
                id: ScheduleID(job.id.uuid),
                state: .failed,
                outcome: nil,
                error: "gave up after \(job.attempts) attempts: \(error)",
                at: clock.now
            )
            throw error
        }
    }

    private func runOnce(_ job: Job, owner: String) async throws -> FanOutRunner.Ending {
        let id = ScheduleID(job.id.uuid)
        guard let schedule = try await store.beginSchedule(appID: job.appID, id: id, now: clock.now) else {
            // Its event was deleted, and the schedule with it.
            try await store.completeJob(id: job.id, owner: owner, at: clock.now)
            return .completed
        }
        switch schedule.state {
        case .pending:
            // Moved to a later time after the job was leased: its job waits for that time.
            try await store.failJob(
                id: job.id,
                owner: owner,
                error: "moved to a later time",
                retryAt: schedule.dueAt,
                at: clock.now
            )
            return .rescheduled
        case .running:
            break
        case .succeeded, .failed, .cancelled, .skipped:
            // A worker recorded it and stopped before completing the job.
            try await store.completeJob(id: job.id, owner: owner, at: clock.now)
            return .completed
        }
        var scheduleLogger = logger
        scheduleLogger[metadataKey: "schedule.id"] = "\(id.publicID)"
        scheduleLogger[metadataKey: "schedule.kind"] = "\(schedule.kind.rawValue)"

        let result = try await keepingLease(of: job, owner: owner) { try await perform(schedule) }
        let now = clock.now
        _ = try await store.finishSchedule(
            appID: schedule.appID,
            id: id,
            state: result.state,
            outcome: result.outcome.jsonValue,
            error: result.error,
            at: now
        )
        try await store.completeJob(id: job.id, owner: owner, at: now)
        scheduleLogger.debug("schedule performed", metadata: ["schedule.state": "\(result.state.rawValue)"])

        // A step that ran moves the ones after it (the end counts from the start, the close from
        // the end).
        if schedule.origin == .timeline, let app = try await store.app(schedule.appID),
            let event = try await store.event(appID: schedule.appID, id: schedule.eventID)
        {
            do {
                try await timeline.plan(app: app, event: event)
            } catch {
                scheduleLogger.debug(
                    "replanning the timeline failed",
                    metadata: ["error": "\(String(reflecting: error))"]
                )
            }
        }
        return .completed
    }

    /// What a run recorded.
    struct Result: Sendable {
        var state: ScheduleState
        var outcome: ScheduleOutcome
        var error: String?
    }

    // MARK: Performing

    private func perform(_ schedule: Schedule) async throws -> Result {
        guard let app = try await store.app(schedule.appID) else {
            return Result(state: .failed, outcome: ScheduleOutcome(), error: "the app was deleted")
        }
        guard let event = try await store.event(appID: app.id, id: schedule.eventID) else {
            return Result(state: .skipped, outcome: ScheduleOutcome(skipped: "the event was deleted"))
        }
        do {
            switch schedule.origin {
            case .api:
                return try await perform(
                    try ScheduledAction(kind: schedule.kind, json: schedule.request),
                    schedule: schedule,
                    app: app,
                    event: event
                )
            case .timeline:
                guard let step = EventTimeline.Step(kind: schedule.kind) else {
                    return Result(
                        state: .failed,
                        outcome: ScheduleOutcome(),
                        error: "a \(schedule.kind.rawValue) is not a timeline step"
                    )
                }
                return try await perform(step, schedule: schedule, app: app, event: event)
            }
        } catch let error as EngineError where !error.isTransient {
            // The answer the immediate call would have given (the event closed, the request no
            // longer valid): recorded, not retried.
            return Result(state: .failed, outcome: ScheduleOutcome(), error: error.description)
        } catch let error as EngineError {
            throw RetryLater(underlying: error)
        } catch let error as ScheduledAction.Unreadable {
            return Result(state: .failed, outcome: ScheduleOutcome(), error: error.description)
        }
    }

    private func perform(_ action: ScheduledAction, schedule: Schedule, app: App, event: Event) async throws -> Result {
        switch action {
        case .start(let request):
            let view = try await starts.start(
                app: app,
                eventKey: event.externalKey,
                request: request,
                jobID: JobID(startOf: schedule.id, environment: request.environment)
            )
            return Result(state: .succeeded, outcome: ScheduleOutcome(startJobs: [view.job.id]))
        case .broadcast(let draft):
            return try await broadcast(draft, schedule: schedule, app: app, event: event)
        }
    }

    private func perform(_ step: EventTimeline.Step, schedule: Schedule, app: App, event: Event) async throws -> Result
    {
        if step == .close && event.state == .ended {
            // Closed already, by this step's earlier run or by the producer: closing is done.
            return Result(state: .succeeded, outcome: ScheduleOutcome(closed: true))
        }
        let facts = try await timeline.facts(app: app, event: event)
        let durations = timeline.policy.durations(for: event.timeline)
        if case .skip(let reason) = EventTimeline.decision(for: step, event: event, durations: durations, facts: facts)
        {
            return Result(state: .skipped, outcome: ScheduleOutcome(skipped: reason))
        }
        switch step {
        case .channels:
            var made: [ScheduledChannel] = []
            for environment in event.environments.sorted(by: { $0.rawValue < $1.rawValue }) {
                let channel = try await channels.ensureChannel(app: app, event: event, environment: environment)
                guard channel.state == .active else {
                    // Another creation is still under way: tried again after a backoff.
                    throw EngineError.apnsUnavailable("the \(environment) channel is still being created")
                }
                made.append(ScheduledChannel(channel))
            }
            return Result(state: .succeeded, outcome: ScheduleOutcome(channels: made))
        case .start:
            guard let start = event.timeline?.start else {
                return Result(state: .failed, outcome: ScheduleOutcome(), error: "the event's timeline has no start")
            }
            var jobs: [JobID] = []
            var failures: [String] = []
            for environment in start.environment.map({ [$0] })
                ?? event.environments.sorted(by: { $0.rawValue < $1.rawValue })
            {
                do {
                    let view = try await starts.start(
                        app: app,
                        eventKey: event.externalKey,
                        request: StartRequest(timeline: start, environment: environment),
                        jobID: JobID(startOf: schedule.id, environment: environment)
                    )
                    jobs.append(view.job.id)
                } catch let error as EngineError where !error.isTransient {
                    failures.append("\(environment): \(error)")
                }
            }
            let error = failures.isEmpty ? nil : failures.joined(separator: "; ")
            return Result(
                state: jobs.isEmpty ? .failed : .succeeded,
                outcome: ScheduleOutcome(startJobs: jobs),
                error: error
            )
        case .end:
            // The state the activities show (the newest broadcast APNs accepted, else the start's),
            // removed from the Lock Screen at once.
            let summary = try await store.broadcastSummary(appID: app.id, eventID: event.id)
            let draft = BroadcastDraft(
                event: .end,
                contentState: summary.lastContentState ?? event.timeline?.start?.contentState ?? JSONObject(),
                dismissalDate: clock.now
            )
            return try await broadcast(draft, schedule: schedule, app: app, event: event)
        case .close:
            _ = try await events.close(app: app, key: event.externalKey)
            return Result(state: .succeeded, outcome: ScheduleOutcome(closed: true))
        }
    }

    private func broadcast(_ draft: BroadcastDraft, schedule: Schedule, app: App, event: Event) async throws -> Result {
        let report = try await broadcasts.broadcast(
            app: app,
            key: event.externalKey,
            draft: draft,
            scheduleID: schedule.id
        )
        let outcome = ScheduleOutcome(broadcast: report.results.map(ScheduledBroadcastResult.init))
        // Accepted somewhere is done, as the immediate call answers 200 or 207; accepted nowhere
        // is the problem the immediate call would have answered.
        return Result(
            state: report.anyAccepted ? .succeeded : .failed,
            outcome: outcome,
            error: report.failure?.description
        )
    }

    /// Runs `body` while keeping the job's lease, so that no other worker takes the schedule over
    /// while it runs (channel creation may wait on APNs longer than a lease).
    private func keepingLease<Value: Sendable>(
        of job: Job,
        owner: String,
        _ body: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        try await withThrowingTaskGroup(of: Value?.self) { group in
            group.addTask {
                while true {
                    try await clock.sleep(for: configuration.leaseDuration / 3)
                    // A lost lease (or a failed renewal) does not cut the action off: it is
                    // idempotent, and its end is recorded either way.
                    _ = try? await store.renewJobLease(
                        id: job.id,
                        owner: owner,
                        now: clock.now,
                        leaseDuration: configuration.leaseDuration
                    )
                }
            }
            group.addTask { try await body() }
            defer { group.cancelAll() }
            while let next = try await group.next() {
                if let value = next { return value }
            }
            throw StoreError.leaseLost(job.id)
        }
    }
}

extension StartRequest {
    /// The timeline's start in one environment.
    init(timeline start: TimelineStart, environment: APNSEnvironment) {
        self.init(
            environment: environment,
            attributes: start.attributes,
            contentState: start.contentState,
            alert: start.alert,
            audience: StartAudience(tags: start.tags, userIDs: start.userIDs, tokens: start.tokens),
            inputPushToken: start.inputPushToken
        )
    }
}
