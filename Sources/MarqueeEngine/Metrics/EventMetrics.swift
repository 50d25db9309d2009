import CoreMetrics
import MarqueeCore
import Synchronization

/// How many events each app has in each state, through swift-metrics, whenever a replica counts
/// them (each janitor sweep): `marquee_events{app,state}`. A `live` event is one whose start a
/// device accepted and that has not ended, so the gauge shows what is on Lock Screens right now.
///
/// `app` is the app's bundle ID, as for the channel gauges; every state is reported, 0 included,
/// so that a panel never shows a stale count for a state that emptied.
final class EventMetrics: Sendable {
    static let events = "marquee_events"

    private struct Key: Hashable {
        var app: String
        var state: EventState
    }

    private let factory: any MetricsFactory
    private let gauges = Mutex<[Key: Meter]>([:])

    init(factory: any MetricsFactory) {
        self.factory = factory
    }

    func report(app: App, counts: [EventState: Int64]) {
        for state in EventState.allCases {
            let key = Key(app: app.bundleID, state: state)
            let gauge = gauges.withLock { gauges in
                if let gauge = gauges[key] { return gauge }
                let gauge = Meter(
                    label: Self.events,
                    dimensions: [("app", key.app), ("state", state.rawValue)],
                    factory: factory
                )
                gauges[key] = gauge
                return gauge
            }
            gauge.set(counts[state] ?? 0)
        }
    }
}
