import CoreMetrics
import Foundation
import Logging
import MarqueeAPNS
import MarqueeCore

/// Broadcasts an update or the end to an event's channels: one APNs request per active channel,
/// the environments in parallel. Marquee assigns each channel's `aps.timestamp` (strictly
/// increasing, `ChannelStore.nextBroadcastTimestamp`), derives `apns-expiration` from the channel's
/// storage policy (`BroadcastExpiration`), chooses the priority (the event's `PriorityPolicy` or
/// the server's, then
/// `PriorityBudget` counted from the log) and records every request in the broadcast log.
///
/// A channel APNs says is gone (`ChannelNotRegistered`, `BadChannelId`) is marked deleted; putting
/// the event again creates a new one.
public struct BroadcastService: Sendable {
    let store: any MarqueeStore
    let clients: APNSClientRegistry
    let events: EventService
    let policy: BroadcastPolicy
    /// The same broadcast for activities the channel does not reach.
    let activityUpdates: ActivityUpdateService
    let clock: any WallClock
    let logger: Logger
    /// `marquee_broadcast_latency_seconds`: from the call to APNs' last answer, every environment
    /// included (what a producer waits for).
    let latency: CoreMetrics.Timer

    init(
        store: any MarqueeStore,
        clients: APNSClientRegistry,
        events: EventService,
        policy: BroadcastPolicy,
        activityUpdates: ActivityUpdateService,
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
        self.clock = clock
        self.logger = logger
    }

    /// Sends the broadcast to the event's channel in each environment asked for. Never throws for
    /// what APNs answered in one environment: the report says, per environment.
    public func broadcast(app: App, key: String, draft: BroadcastDraft) async throws -> BroadcastReport {
        let started = ContinuousClock.now
        let event = try await events.event(app: app, key: key)
        guard event.state == .scheduled || event.state == .live else {
            throw EngineError.conflict("event \(key) is \(event.state.rawValue): broadcasts go to scheduled or live events only")
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
                    FieldError("/contentState", "the broadcast payload would be \(size) bytes; APNs takes at most \(limit)")
                ])
            }
        }
        try await activityUpdates.checkSize(of: draft, app: app, event: event, environments: environments)
        // Every environment the app cannot reach is refused before any is sent to.
        for environment in environments { _ = try await clients.client(for: app, environment: environment) }

        let results = try await withThrowingTaskGroup(of: EnvironmentBroadcast.self) { group in
            for environment in environments {
                group.addTask { try await send(draft, app: app, event: event, environment: environment) }
            }
            return try await group.reduce(into: [EnvironmentBroadcast]()) { $0.append($1) }
        }
        latency.recordNanoseconds((ContinuousClock.now - started).wholeNanoseconds)
        return BroadcastReport(
            event: event,
            kind: draft.event,
            results: results.sorted { $0.environment.rawValue < $1.environment.rawValue }
        )
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
        let event = try await events.event(app: app, key: key)
        guard let channel = try await store.channels(appID: app.id, eventID: event.id).last(where: { $0.environment == environment })
        else {
            throw EngineError.notFound(resource: "channel", id: "\(key)/\(environment)")
        }
        return try await store.broadcastLog(appID: app.id, channelID: channel.id, before: before, limit: limit)
    }

    // MARK: Steps

    /// The channel's broadcast, then the same update for the activities on update tokens (with the
    /// channel's timestamp, so that both kinds of activity see one sequence).
    private func send(_ draft: BroadcastDraft, app: App, event: Event, environment: APNSEnvironment) async throws -> EnvironmentBroadcast {
        let requested = (event.priorityPolicy ?? policy.priorityPolicy).requestedPriority(
            explicit: draft.priority,
            important: draft.important,
            hasAlert: draft.alert != nil
        )
        var result = try await sendToChannel(draft, app: app, event: event, environment: environment, requested: requested)
        result.activityUpdates = try await activityUpdates.enqueue(
            app: app,
            event: event,
            environment: environment,
            draft: draft,
            channelTimestamp: result.timestamp,
            priority: result.decision?.priority ?? requested
        )
        return result
    }

    private func sendToChannel(
        _ draft: BroadcastDraft,
        app: App,
        event: Event,
        environment: APNSEnvironment,
        requested: APNSPriority
    ) async throws -> EnvironmentBroadcast {
        guard let channel = try await store.liveChannel(appID: app.id, eventID: event.id, environment: environment),
            channel.state == .active, let apnsChannelID = channel.apnsChannelID
        else {
            return EnvironmentBroadcast(
                environment: environment,
                channel: nil,
                outcome: .noActiveChannel(
                    detail: "the event has no active channel in \(environment); put the event again to create one"
                )
            )
        }
        let now = clock.now
        let used =
            requested == .immediate
            ? try await store.broadcastCount(
                appID: app.id,
                channelID: channel.id,
                priority: .immediate,
                since: now.addingTimeInterval(-PriorityBudget.window.timeInterval)
            ) : 0
        let decision = policy.budget.decide(requested: requested, sentAtImmediateInWindow: used)
        let timestamp = try await store.nextBroadcastTimestamp(appID: app.id, channelID: channel.id, now: clock.unixSeconds)
        let expiration = BroadcastExpiration.expiration(
            for: channel.storagePolicy,
            now: now,
            staleDate: draft.staleDate,
            dismissalDate: draft.dismissalDate
        )
        let requestID = UUID()
        var result = EnvironmentBroadcast(
            environment: environment,
            channel: channel,
            outcome: .noActiveChannel(detail: ""),
            requestID: requestID,
            timestamp: timestamp,
            expiration: expiration.unixSeconds,
            decision: decision
        )

        let client = try await clients.client(for: app, environment: environment)
        let sentAt = clock.now
        let started = ContinuousClock.now
        var status = 200
        var reason: APNSErrorReason?
        var uniqueID: String?
        do throws(APNSError) {
            let broadcast = try APNSBroadcast(
                bundleID: app.bundleID,
                channelID: apnsChannelID,
                storagePolicy: channel.storagePolicy,
                payload: draft.payload(timestamp: timestamp),
                priority: decision.priority,
                expiration: expiration,
                requestID: requestID
            )
            let answer = try await client.broadcast(broadcast)
            uniqueID = answer.uniqueID
            result.outcome = .accepted(requestID: answer.requestID, uniqueID: answer.uniqueID)
        } catch {
            var channelDeleted = false
            if case .rejected(let rejection) = error {
                status = rejection.status
                reason = rejection.reason
                uniqueID = rejection.uniqueID
            } else {
                status = 0
            }
            if error.failureClass == .channelGone {
                channelDeleted = (try? await store.transitionChannel(appID: app.id, id: channel.id, to: .deleted, at: clock.now)) != nil
                logger.debug(
                    "broadcast found the channel gone at APNs; marked deleted",
                    metadata: ["channel.id": "\(channel.id)", "apns.request_id": "\(requestID)"]
                )
            }
            result.outcome = .failed(status: status, reason: reason, detail: error.description, channelDeleted: channelDeleted)
        }
        let latency = ContinuousClock.now - started
        result.latency = latency
        try await store.appendBroadcastLog(
            BroadcastLogEntry(
                appID: app.id,
                channelID: channel.id,
                apnsRequestID: requestID,
                apnsUniqueID: uniqueID,
                priority: decision.priority,
                timestamp: timestamp,
                status: status,
                reason: reason,
                latency: latency,
                sentAt: sentAt,
                event: draft.event,
                downgraded: decision.downgraded
            )
        )
        return result
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
