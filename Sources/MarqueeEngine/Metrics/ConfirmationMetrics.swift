import CoreMetrics
import MarqueeCore
import Synchronization

/// What this replica's start confirmations did, through swift-metrics:
/// `marquee_start_confirmations_total{app,outcome}`, `app` the app's bundle ID:
///
/// - `asked`: background pushes sent to the app of a device whose start ended uncertain
/// - `confirmed`: uncertain devices whose app reported the activity showing (never sent it again)
/// - `restarted`: uncertain devices whose app reported no activity there, queued for the start once more
/// - `uncertain`: devices that stayed uncertain when the confirmation window closed (no answer, or
///   an app that could not be asked)
final class ConfirmationMetrics: Sendable {
    static let confirmations = "marquee_start_confirmations_total"

    /// The outcomes the counter has, each a series from the first use on.
    enum Outcome: String, CaseIterable {
        case asked, confirmed, restarted, uncertain
    }

    private struct Key: Hashable {
        var app: String
        var outcome: Outcome
    }

    private let factory: any MetricsFactory
    private let counters = Mutex<[Key: Counter]>([:])

    init(factory: any MetricsFactory) {
        self.factory = factory
    }

    func count(app: App, _ outcome: Outcome, _ devices: Int) {
        guard devices > 0 else { return }
        let key = Key(app: app.bundleID, outcome: outcome)
        let counter = counters.withLock { counters in
            if let counter = counters[key] { return counter }
            let counter = Counter(
                label: Self.confirmations,
                dimensions: [("app", key.app), ("outcome", outcome.rawValue)],
                factory: factory
            )
            counters[key] = counter
            return counter
        }
        counter.increment(by: devices)
    }
}
