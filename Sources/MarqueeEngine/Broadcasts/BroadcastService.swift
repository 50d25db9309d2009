import CoreMetrics
import Foundation
import Logging
import MarqueeAPNS
import MarqueeCore

/// Broadcasts an update or the end to an event's channels: one APNs request per active channel,
/// the environments in parallel. Marquee assigns each channel's `aps.timestamp` (strictly
/// increasing), derives `apns-expiration` from the channel's storage policy
/// (`BroadcastExpiration`), chooses the priority (the event's `PriorityPolicy` or the server's,
/// then `PriorityBudget` counted from the log) and records every request in the broadcast log.
///
/// The store is asked once before the send (`EventStore.beginBroadcast`: the event, every
/// channel's timestamp and budget use, one transaction) and once per channel after APNs' answer
/// (its log line); a scheduled broadcast also logs each request before it is sent.
///
/// A channel APNs says is gone (`ChannelNotRegistered`, `BadChannelId`) is marked deleted; putting
/// the event again creates a new one.
public struct BroadcastService: Sendable {
    let store: any BroadcastLogStore & ChannelStore
    let clients: APNSClientRegistry
    let events: EventService
    let policy: BroadcastPolicy
    /// The same broadcast for activities the channel does not reach.
    let activityUpdates: ActivityUpdateService
    /// Told when an end went out, so that the event's timeline stops waiting to send its own.
    let timeline: TimelinePlanner
    let clock: any WallClock
    let logger: Logger
    /// `marquee_broadcast_latency_seconds`: from the call to APNs' last answer, every environment
    /// included (what a producer waits for).
    let latency: CoreMetrics.Timer

    init(
        store: any BroadcastLogStore & ChannelStore,
        clients: APNSClientRegistry,
        events: EventService,
        policy: BroadcastPolicy,
        activityUpdates: ActivityUpdateService,
        timeline: TimelinePlanner,
        clock: any WallClock,
        logger: Logger,
        metricsFactory: any MetricsFactory = MetricsSystem.factory
    ) {
        latency = CoreMetrics.Timer(label: "marquee_broadcast_latency_seconds", dimensions: [], factory: metricsFactory)
        self.store = store
        self.clients = clients
        self.events = events
        self.policy = policy
        self.activityUpdates = activityUpdates
        self.timeline = timeline
        self.clock = clock
        self.logger = logger
    }

    /// Sends the broadcast to the event's channel in each environment asked for. Never throws for
    /// what APNs answered in one environment: the report says, per environment.
    public func broadcast(app: App, key: String, draft: BroadcastDraft) async throws -> BroadcastReport {
        try await broadcast(app: app, key: key, draft: draft, scheduleID: nil)
    }

    /// The same, for a schedule when `scheduleID` is set: then each channel's request is logged
    /// before it is sent, once per schedule (`BroadcastLogStore.appendScheduledBroadcastLog`), and a
    /// second run of the schedule (a worker taking it over) reports what the log has instead of
    /// sending again. A request logged and never answered (the worker stopped with it in flight)
    /// is reported failed with status 0 and not sent again: at most once, never twice.
    func broadcast(
        app: App,
        key: String,
        draft: BroadcastDraft,
        scheduleID: ScheduleID?
    ) async throws -> BroadcastReport {
        let started = ContinuousClock.now
        // The store's one transaction before the send: the event, each channel's timestamp and
        // budget use. Taken before the checks: a refused broadcast leaves a timestamp unused,
        // which the strictly increasing sequence allows.
        let target = try await events.beginBroadcast(
            app: app,
            key: key,
            environments: draft.environments.map { Set($0) } ?? Set(APNSEnvironment.allCases),
            now: clock.unixSeconds,
            budgetSince: clock.now.addingTimeInterval(-PriorityBudget.window.timeInterval)
        )
        let environments = try await check(target, app: app, key: key, draft: draft)
        let event = target.event
        let results = try await withThrowingTaskGroup(of: EnvironmentBroadcast.self) { group in
            for environment in environments {
                let hasUpdateTokenActivities = target.updateTokenEnvironments.contains(environment)
                let taken = target.taken[environment]
                group.addTask {
                    try await send(
                        draft,
                        app: app,
                        event: event,
                        environment: environment,
                        taken: taken,
                        hasUpdateTokenActivities: hasUpdateTokenActivities,
                        scheduleID: scheduleID
                    )
                }
            }
            return try await group.reduce(into: [EnvironmentBroadcast]()) { $0.append($1) }
        }
        latency.recordNanoseconds((ContinuousClock.now - started).wholeNanoseconds)
        let report = BroadcastReport(
            event: event,
            kind: draft.event,
            results: results.sorted { $0.environment.rawValue < $1.environment.rawValue }
        )
        if draft.event == .end && report.anyAccepted && EventTimeline.isRunning(event) {
            // The timeline's own end is no longer needed, and its close counts from this end. If
            // this fails the end step still checks the log before it sends.
            do {
                try await timeline.plan(app: app, event: event)
            } catch {
                // A warning: the timeline's close then stays at its planned time instead of counting
                // from this end.
                logger.warning(
                    "replanning the timeline after an end failed",
                    metadata: ["error": "\(String(reflecting: error))"]
                )
            }
        }
        return report
    }

    /// Checks a broadcast as `broadcast` would, sending nothing: the event (open), the draft, its
    /// environments, the payload's size, and that the app can reach APNs in each environment.
    /// What a broadcast scheduled for later is checked against when it is scheduled.
    func validate(app: App, key: String, draft: BroadcastDraft) async throws -> (BroadcastTarget, [APNSEnvironment]) {
        let target = try await events.broadcastTarget(app: app, key: key)
        return (target, try await check(target, app: app, key: key, draft: draft))
    }

    /// `validate`'s checks of the broadcast against the event as the store read it; the
    /// environments to send to.
    private func check(
        _ target: BroadcastTarget,
        app: App,
        key: String,
        draft: BroadcastDraft
    ) async throws -> [APNSEnvironment] {
        let event = target.event
        guard event.state == .scheduled || event.state == .live else {
            throw EngineError.conflict(
                """
                event \(key) is \(event.state.rawValue): broadcasts go to scheduled or live events only; to \
                broadcast again, create a new event with another key
                """
            )
        }
        try draft.validate()
        let environments = try draft.validatedEnvironments(of: event)
        // Refuse a payload over APNs' 5120 bytes before anything is sent (a timestamp has the same
        // number of digits for centuries, so the size does not depend on it).
        do {
            _ = try draft.payload(timestamp: clock.unixSeconds).encodedForBroadcast()
        } catch {
            switch error {
            case .tooLarge(let size, let limit):
                throw EngineError.invalidInput([
                    FieldError(
                        "/contentState",
                        "the broadcast payload would be \(size) bytes; APNs takes at most \(limit)"
                    )
                ])
            }
        }
        try activityUpdates.checkSize(of: draft, reaching: environments.filter(target.updateTokenEnvironments.contains))
        // Every environment the app cannot reach is refused before any is sent to.
        for environment in environments { _ = try await clients.client(for: app, environment: environment) }
        return environments
    }

    /// The broadcast log of the event's channel in `environment` (its newest channel there, even
    /// when deleted), newest first.
    public func log(
        app: App,
        key: String,
        environment: APNSEnvironment,
        before: Int64?,
        limit: Int
    ) async throws -> [BroadcastLogEntry] {
        let channel = try await newestChannel(app: app, key: key, environment: environment)
        return try await store.broadcastLog(appID: app.id, channelID: channel.id, before: before, limit: limit)
    }

    /// The hourly budget of priority-10 broadcasts of the event's channel in `environment` (its
    /// newest channel there), and how much of it the last hour used.
    public func priorityBudgetUse(
        app: App,
        key: String,
        environment: APNSEnvironment
    ) async throws -> (limitPerHour: Int, used: Int) {
        let channel = try await newestChannel(app: app, key: key, environment: environment)
        let used = try await store.broadcastCount(
            appID: app.id,
            channelID: channel.id,
            priority: .immediate,
            since: clock.now.addingTimeInterval(-PriorityBudget.window.timeInterval)
        )
        return (policy.budget.limitPerHour, used)
    }

    private func newestChannel(app: App, key: String, environment: APNSEnvironment) async throws -> BroadcastChannel {
        let event = try await events.event(app: app, key: key)
        guard
            let channel = try await store.channels(appID: app.id, eventID: event.id).last(where: {
                $0.environment == environment
            })
        else {
            throw EngineError.notFound(resource: "channel", id: "\(key)/\(environment)")
        }
        return channel
    }

    // MARK: Steps

    /// The channel's broadcast, then the same update for the activities on update tokens (with the
    /// channel's timestamp, so that both kinds of activity see one sequence). For a schedule, the
    /// activities' job has an ID derived from the schedule's, so a second run enqueues it once.
    /// `hasUpdateTokenActivities` is what the event's read found: an activity registered since
    /// then gets the next broadcast.
    private func send(
        _ draft: BroadcastDraft,
        app: App,
        event: Event,
        environment: APNSEnvironment,
        taken: BroadcastTake?,
        hasUpdateTokenActivities: Bool,
        scheduleID: ScheduleID?
    ) async throws -> EnvironmentBroadcast {
        let requested = (event.priorityPolicy ?? policy.priorityPolicy).requestedPriority(
            explicit: draft.priority,
            important: draft.important,
            hasAlert: draft.alert != nil
        )
        var result = try await sendToChannel(
            draft,
            app: app,
            environment: environment,
            taken: taken,
            requested: requested,
            scheduleID: scheduleID
        )
        result.activityUpdates = try await activityUpdates.enqueue(
            app: app,
            event: event,
            environment: environment,
            draft: draft,
            channelTimestamp: result.timestamp,
            priority: result.decision?.priority ?? requested,
            hasUpdateTokenActivities: hasUpdateTokenActivities,
            jobID: scheduleID.map { JobID(derivedFrom: $0, purpose: "activity-update", environment: environment) }
        )
        return result
    }

    /// The request on the channel `taken` (its timestamp and budget use were read with the event),
    /// then its line in the log: nothing else waits on the store before APNs' answer.
    private func sendToChannel(
        _ draft: BroadcastDraft,
        app: App,
        environment: APNSEnvironment,
        taken: BroadcastTake?,
        requested: APNSPriority,
        scheduleID: ScheduleID?
    ) async throws -> EnvironmentBroadcast {
        guard let taken, let apnsChannelID = taken.channel.apnsChannelID,
            let timestamp = taken.channel.lastBroadcastTimestamp
        else { return .noActiveChannel(in: environment) }
        let channel = taken.channel
        let now = clock.now
        let decision = policy.budget.decide(
            requested: requested,
            sentAtImmediateInWindow: requested == .immediate ? taken.immediateSent : 0
        )
        let expiration = BroadcastExpiration.expiration(
            for: channel.storagePolicy,
            now: now,
            staleDate: draft.staleDate,
            dismissalDate: draft.dismissalDate
        )
        let requestID = UUID.random()
        var result = EnvironmentBroadcast(
            environment: environment,
            channel: channel,
            outcome: .noActiveChannel(detail: ""),
            requestID: requestID,
            timestamp: timestamp,
            expiration: expiration.unixSeconds,
            decision: decision
        )

        // Held until it is answered: a key rotated meanwhile retires this client without closing it.
        let client = try await clients.holdClient(for: app, environment: environment)
        defer { Task { await clients.release(client) } }
        let sentAt = clock.now
        let entry = BroadcastLogEntry(
            draft,
            appID: app.id,
            channelID: channel.id,
            requestID: requestID,
            decision: decision,
            timestamp: timestamp,
            sentAt: sentAt,
            scheduleID: scheduleID
        )
        var reservedSequence: Int64?
        if scheduleID != nil {
            // Logged before it is sent: a worker that takes the schedule over finds this row.
            let (logged, appended) = try await store.appendScheduledBroadcastLog(entry)
            guard appended else {
                return EnvironmentBroadcast(logged: logged, channel: channel, environment: environment)
            }
            reservedSequence = logged.sequence
        }
        let started = ContinuousClock.now
        let answer = await publish(
            draft,
            app: app,
            channel: channel,
            apnsChannelID: apnsChannelID,
            timestamp: timestamp,
            priority: decision.priority,
            expiration: expiration,
            requestID: requestID,
            through: client
        )
        let latency = ContinuousClock.now - started
        result.outcome = answer.outcome
        result.latency = latency
        try await log(answer, latency: latency, entry: entry, reservedSequence: reservedSequence)
        return result
    }

    /// APNs' answer to a broadcast on a channel, as the log keeps it and the caller reads it.
    private struct ChannelAnswer {
        var status = 200
        var reason: APNSErrorReason?
        var uniqueID: String?
        var outcome: EnvironmentBroadcast.Outcome
    }

    /// Sends the broadcast and reads APNs' answer; a channel APNs no longer knows is marked deleted.
    private func publish(
        _ draft: BroadcastDraft,
        app: App,
        channel: BroadcastChannel,
        apnsChannelID: String,
        timestamp: Int64,
        priority: APNSPriority,
        expiration: APNSExpiration,
        requestID: UUID,
        through client: any APNSGateway
    ) async -> ChannelAnswer {
        do throws(APNSError) {
            let broadcast = try APNSBroadcast(
                bundleID: app.bundleID,
                channelID: apnsChannelID,
                storagePolicy: channel.storagePolicy,
                payload: draft.payload(timestamp: timestamp),
                priority: priority,
                expiration: expiration,
                requestID: requestID
            )
            let answer = try await client.broadcast(broadcast)
            return ChannelAnswer(
                uniqueID: answer.uniqueID,
                outcome: .accepted(requestID: answer.requestID, uniqueID: answer.uniqueID)
            )
        } catch {
            var answer = ChannelAnswer(status: 0, outcome: .noActiveChannel(detail: ""))
            if case .rejected(let rejection) = error {
                answer.status = rejection.status
                answer.reason = rejection.reason
                answer.uniqueID = rejection.uniqueID
            }
            var channelDeleted = false
            if error.failureClass == .channelGone {
                channelDeleted =
                    (try? await store.transitionChannel(appID: app.id, id: channel.id, to: .deleted, at: clock.now))
                    != nil
                logger.debug(
                    "broadcast found the channel gone at APNs; marked deleted",
                    metadata: ["channel.id": "\(channel.id)", "apns.request_id": "\(requestID)"]
                )
            }
            answer.outcome = .failed(
                status: answer.status,
                reason: answer.reason,
                detail: error.description,
                channelDeleted: channelDeleted
            )
            return answer
        }
    }

    /// The broadcast's line in the log: the one reserved before a scheduled send completed, or a
    /// new one.
    private func log(
        _ answer: ChannelAnswer,
        latency: Duration,
        entry: BroadcastLogEntry,
        reservedSequence: Int64?
    ) async throws {
        if let reservedSequence {
            try await store.completeBroadcastLog(
                appID: entry.appID,
                sequence: reservedSequence,
                status: answer.status,
                reason: answer.reason,
                apnsUniqueID: answer.uniqueID,
                latency: latency
            )
        } else {
            var entry = entry
            entry.status = answer.status
            entry.reason = answer.reason
            entry.apnsUniqueID = answer.uniqueID
            entry.latency = latency
            try await store.appendBroadcastLog(entry)
        }
    }
}

extension EnvironmentBroadcast {
    /// Nothing sent: the event has no active channel in `environment`.
    static func noActiveChannel(in environment: APNSEnvironment) -> EnvironmentBroadcast {
        EnvironmentBroadcast(
            environment: environment,
            channel: nil,
            outcome: .noActiveChannel(
                detail: "the event has no active channel in \(environment); put the event again to create one"
            )
        )
    }

    /// What the log says a schedule's earlier run sent on the channel. A row still at status 0 was
    /// in flight when that run stopped: whether APNs took it is unknown, and it is not sent again.
    init(logged: BroadcastLogEntry, channel: BroadcastChannel, environment: APNSEnvironment) {
        let outcome: Outcome =
            logged.status == 200
            ? .accepted(requestID: logged.apnsRequestID.lowercasedText, uniqueID: logged.apnsUniqueID)
            : .failed(
                status: logged.status,
                reason: logged.reason,
                detail: logged.status == 0
                    ? "sent by an earlier run of the schedule that stopped before APNs answered; not sent again"
                    : "sent by an earlier run of the schedule",
                channelDeleted: false
            )
        self.init(
            environment: environment,
            channel: channel,
            outcome: outcome,
            requestID: logged.apnsRequestID,
            timestamp: logged.timestamp,
            expiration: nil,
            decision: nil,
            latency: logged.latency
        )
    }
}

extension APNSExpiration {
    /// The header's value: Unix seconds, `0` for `immediately`.
    var unixSeconds: Int64 {
        switch self {
        case .immediately: 0
        case .at(let date): Int64(date.timeIntervalSince1970.rounded(.down))
        }
    }
}

extension BroadcastLogEntry {
    /// The log line of a broadcast about to be sent: no answer yet (status 0).
    init(
        _ draft: BroadcastDraft,
        appID: AppID,
        channelID: ChannelID,
        requestID: UUID,
        decision: PriorityDecision,
        timestamp: Int64,
        sentAt: Date,
        scheduleID: ScheduleID?
    ) {
        self.init(
            appID: appID,
            channelID: channelID,
            apnsRequestID: requestID,
            apnsUniqueID: nil,
            priority: decision.priority,
            timestamp: timestamp,
            status: 0,
            reason: nil,
            latency: .zero,
            sentAt: sentAt,
            event: draft.event,
            downgraded: decision.downgraded,
            contentState: draft.contentState,
            alert: draft.alert?.jsonObject,
            scheduleID: scheduleID
        )
    }
}
