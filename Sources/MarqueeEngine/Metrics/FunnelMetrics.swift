import CoreMetrics
import MarqueeCore
import Synchronization

/// The delivery funnels of each app's live events, summed per environment, whenever a replica
/// counts them (`FunnelReporter`, every `metrics.funnelIntervalSeconds`): `marquee_event_funnel{app,environment,stage}`.
/// Live events only: what is on Lock Screens now and how it got there; an ended event's funnel
/// stays in the API (`GET /v1/events/{eventKey}/funnel`). No event label, so the series stay few
/// whatever the schedule.
///
/// `app` is the app's bundle ID; every stage of every environment of the app is reported, 0
/// included, so a panel never shows a stale count after the last live event ended.
final class FunnelMetrics: Sendable {
    static let funnel = "marquee_event_funnel"

    /// A stage's label: the API's field names in snake case.
    static func label(_ stage: FunnelStage) -> String {
        switch stage {
        case .targeted: "targeted"
        case .sent: "sent"
        case .accepted: "accepted"
        case .rejected: "rejected"
        case .uncertain: "uncertain"
        case .failed: "failed"
        case .showing: "confirmed_showing"
        case .absent: "absent"
        case .ended: "ended"
        case .lateJoinersStarted: "late_joiners_started"
        case .absentThenStarted: "absent_then_started"
        }
    }

    private struct Key: Hashable {
        var app: String
        var environment: APNSEnvironment
        var stage: FunnelStage
    }

    private let factory: any MetricsFactory
    private let gauges = Mutex<[Key: Meter]>([:])

    init(factory: any MetricsFactory) {
        self.factory = factory
    }

    /// Reports the sum of `funnels` (those of the app's live events) per environment and stage.
    func report(app: App, funnels: [DeliveryFunnel]) {
        var sums: [APNSEnvironment: [FunnelStage: Int64]] = [:]
        for funnel in funnels {
            for (stage, count) in funnel.counts { sums[funnel.environment, default: [:]][stage, default: 0] += count }
        }
        for environment in app.environments {
            for stage in FunnelStage.allCases {
                let key = Key(app: app.bundleID, environment: environment, stage: stage)
                let gauge = gauges.withLock { gauges in
                    if let gauge = gauges[key] { return gauge }
                    let gauge = Meter(
                        label: Self.funnel,
                        dimensions: [
                            ("app", key.app), ("environment", environment.rawValue), ("stage", Self.label(stage)),
                        ],
                        factory: factory
                    )
                    gauges[key] = gauge
                    return gauge
                }
                gauge.set(sums[environment]?[stage] ?? 0)
            }
        }
    }
}
