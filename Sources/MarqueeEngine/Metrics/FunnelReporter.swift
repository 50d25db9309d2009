import CoreMetrics
import Logging
import MarqueeCore
import ServiceLifecycle

/// Counts the delivery funnels of every app's live events into `marquee_event_funnel`
/// (`FunnelMetrics`), every `interval`, on every replica; a zero interval reports none.
///
/// Apart from `ChannelJanitor` and at its own pace: a funnel is one statement over its event's
/// whole audience (its start ledger, outcomes and reports), so its cost grows with the audience where
/// the janitor's checks do not (a 100,000-device event's: 30 ms of one PostgreSQL process, idle,
/// beside 500,000 other entries, planned without parallel workers; `PresenceQueries.funnel`,
/// `PostgresStore.wholeAudienceRows`).
public struct FunnelReporter: Service {
    let store: any AppStore & EventStore & PresenceStore
    let interval: Duration
    let clock: any WallClock
    let logger: Logger
    let metrics: FunnelMetrics

    public init(
        store: any AppStore & EventStore & PresenceStore,
        interval: Duration,
        clock: any WallClock,
        logger: Logger,
        metricsFactory: any MetricsFactory = MetricsSystem.factory
    ) {
        self.store = store
        self.interval = interval
        self.clock = clock
        self.logger = logger
        self.metrics = FunnelMetrics(factory: metricsFactory)
    }

    public func run() async throws {
        guard interval > .zero else {
            try? await gracefulShutdown()
            return
        }
        await clock.repeating(every: interval, logger: logger, failure: "funnel metrics not counted") {
            try await report()
        }
    }

    /// One count of every app's live events' funnels.
    public func report() async throws {
        for app in try await store.apps() {
            do {
                try await report(app)
            } catch let error as CancellationError {
                throw error
            } catch {
                logger.debug("funnel metrics skipped an app", metadata: ["app.id": "\(app.id)", "error": "\(error)"])
            }
        }
    }

    /// The funnels of the app's live events, one statement each, page by page.
    func report(_ app: App) async throws {
        var funnels: [DeliveryFunnel] = []
        try await store.forEachEvent(of: app, states: [.live]) { event in
            funnels += try await store.deliveryFunnels(appID: app.id, eventID: event.id)
        }
        metrics.report(app: app, funnels: funnels)
    }
}
