import CoreMetrics
import Foundation
import Logging
import MarqueeCore
import ServiceLifecycle

/// Finishes what requests and crashes leave behind, on every replica, every `interval`: abandons
/// stale reservations, retries deletions APNs could not take, deletes orphans past their grace
/// period, removes deleted events whose channels are gone, and recreates missing channels of open
/// events (those whose timeline has not reached its channels' lead time excepted). Every step is a
/// conditional store transition, so replicas running it together agree.
public struct ChannelJanitor: Service {
    let store: any AppStore & ChannelStore & EventStore
    let lifecycle: ChannelLifecycle
    let policy: ChannelPolicy
    let timeline: TimelinePolicy
    let interval: Duration
    let clock: any WallClock
    let logger: Logger
    let eventMetrics: EventMetrics

    public init(
        store: any AppStore & ChannelStore & EventStore,
        lifecycle: ChannelLifecycle,
        policy: ChannelPolicy,
        timeline: TimelinePolicy = TimelinePolicy(),
        interval: Duration,
        clock: any WallClock,
        logger: Logger,
        metricsFactory: any MetricsFactory = MetricsSystem.factory
    ) {
        self.store = store
        self.lifecycle = lifecycle
        self.policy = policy
        self.timeline = timeline
        self.interval = interval
        self.clock = clock
        self.logger = logger
        self.eventMetrics = EventMetrics(factory: metricsFactory)
    }

    public func run() async throws {
        await clock.repeating(every: interval, logger: logger, failure: "channel janitor sweep failed") {
            try await sweep()
        }
    }

    /// One pass over every app.
    public func sweep() async throws {
        for app in try await store.apps() {
            do {
                try await sweep(app)
            } catch {
                logger.debug("channel janitor skipped an app", metadata: ["app.id": "\(app.id)", "error": "\(error)"])
            }
        }
    }

    func sweep(_ app: App) async throws {
        eventMetrics.report(app: app, counts: try await store.eventCounts(appID: app.id))
        for environment in APNSEnvironment.allCases {
            let channels = try await store.channels(
                appID: app.id,
                environment: environment,
                states: [.creating, .deleting, .orphaned]
            )
            for channel in channels {
                switch channel.state {
                case .creating where policy.isAbandoned(channel, now: clock.now):
                    _ = try? await store.transitionChannel(appID: app.id, id: channel.id, to: .deleted, at: clock.now)
                case .deleting:
                    try await lifecycle.deleteChannel(app: app, channel: channel)
                case .orphaned where policy.orphanIsDue(channel, now: clock.now):
                    try await lifecycle.deleteChannel(app: app, channel: channel)
                default:
                    break
                }
            }
        }
        try await finishDeletedEvents(app)
        try await restoreChannelsOfOpenEvents(app)
        // Every replica reports every app's count each sweep, so the gauges are right on a replica
        // that has not touched the app's channels itself (and after a restart).
        for environment in app.environments.sorted(by: { $0.rawValue < $1.rawValue }) {
            await lifecycle.reportQuota(app: app, environment: environment)
        }
    }

    /// Events deleted while APNs was unreachable are `cancelled`; once their channels are gone the
    /// rows go too.
    private func finishDeletedEvents(_ app: App) async throws {
        try await store.forEachEvent(of: app, states: [.cancelled]) { event in
            let live = try await store.channels(appID: app.id, eventID: event.id).filter { $0.state.isLive }
            var allDeleted = true
            for channel in live {
                if try await !lifecycle.deleteChannel(app: app, channel: channel) { allDeleted = false }
            }
            if allDeleted { _ = try await store.deleteEvent(appID: app.id, id: event.id) }
        }
    }

    /// An open event has an active channel in each of its environments; one lost (deleted outside
    /// Marquee, abandoned after a crash) is made again. An event whose timeline makes its channels
    /// later is left for it.
    private func restoreChannelsOfOpenEvents(_ app: App) async throws {
        guard app.signingKeyID != nil else { return }
        try await store.forEachEvent(of: app, states: [.scheduled, .live]) { event in
            if EventTimeline.defersChannels(
                event: event,
                durations: timeline.durations(for: event.timeline),
                now: clock.now
            ) {
                return
            }
            for environment in event.environments.sorted(by: { $0.rawValue < $1.rawValue }) {
                if try await store.liveChannel(appID: app.id, eventID: event.id, environment: environment) == nil {
                    _ = try await lifecycle.ensureChannel(app: app, event: event, environment: environment)
                }
            }
        }
    }
}
