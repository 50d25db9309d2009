import Foundation
import Logging
import MarqueeCore

/// The device's own word: what the app says ActivityKit shows for an event, and the funnel it
/// completes beside what APNs answered.
public struct PresenceService: Sendable {
    let store: any PresenceStore & TokenStore
    let clock: any WallClock
    let logger: Logger
    /// How often one device may report for one event.
    public let bound: PresenceRateBound

    public init(store: any PresenceStore & TokenStore, bound: PresenceRateBound, clock: any WallClock, logger: Logger) {
        self.store = store
        self.bound = bound
        self.clock = clock
        self.logger = logger
    }

    /// What Marquee records for a device and an event after a report, with where the device stands
    /// in the event's starts.
    public struct DeviceView: Sendable, Hashable {
        public var presence: DevicePresence
        public var standing: DeviceStartStanding
    }

    /// Records the report of the device whose push-to-start token is `token` (hex) for `event`.
    /// The token must be registered for the event's attributes type in the report's environment
    /// (`EngineError.tokenNotRegistered` otherwise); past `bound`, `EngineError.rateLimited`.
    public func report(app: App, event: Event, token: String, _ report: PresenceReport) async throws -> DeviceView {
        var validation = InputValidation()
        if let error = TokenRules.checkHex(token, pointer: "token") { validation.add(error) }
        validation.require(
            app.environments.contains(report.environment),
            "/environment",
            "the app does not use the \(report.environment) environment"
        )
        validation.require(
            event.environments.contains(report.environment),
            "/environment",
            "event \(event.externalKey) has no \(report.environment) channel"
        )
        if let activityID = report.activityID {
            validation.require(
                EventKeyRule.isKeyLike(activityID),
                "/activityID",
                "must be ActivityKit's Activity.id (1–200 letters, digits, '.', '_', '-' and ':')"
            )
        } else {
            validation.require(
                report.state != .showing,
                "/activityID",
                "a showing report names ActivityKit's Activity.id"
            )
        }
        try validation.check()

        guard
            let device = try await store.pushToStartToken(
                appID: app.id,
                environment: report.environment,
                attributesType: event.attributesType,
                token: token.lowercased()
            )
        else {
            throw EngineError.tokenNotRegistered(
                token: PushTokenRedaction.redacted(token),
                attributesType: event.attributesType,
                environment: report.environment
            )
        }
        let now = clock.now
        switch try await store.recordPresence(
            appID: app.id,
            eventID: event.id,
            tokenRowID: device.rowID,
            report,
            bound: bound,
            at: now
        ) {
        case .recorded(let presence):
            logger.debug(
                "device reported",
                metadata: [
                    "event.key": "\(event.externalKey)", "token.row": "\(device.rowID)",
                    "presence.state": "\(presence.state.rawValue)",
                ]
            )
            let standing = try await store.startStanding(appID: app.id, eventID: event.id, tokenRowID: device.rowID)
            return DeviceView(presence: presence, standing: standing)
        case .limited(let windowStartedAt):
            throw EngineError.rateLimited(
                """
                the device reported \(bound.maximumReports) times for event \(event.externalKey) within \
                \(bound.window); report what ActivityKit shows when it changes, not more often
                """,
                retryAfterSeconds: bound.retryAfterSeconds(windowStartedAt: windowStartedAt, now: now)
            )
        }
    }

    /// The event's funnel, one entry per environment of the event (counts the store has none for
    /// are zero).
    public func funnels(app: App, event: Event) async throws -> [DeliveryFunnel] {
        let counted = try await store.deliveryFunnels(appID: app.id, eventID: event.id)
        return event.environments.sorted { $0.rawValue < $1.rawValue }.map { environment in
            counted.first { $0.environment == environment } ?? DeliveryFunnel(environment: environment)
        }
    }

    /// The event's funnel over time, one series per environment of the event (a stage the store
    /// counts nobody in reads 0 throughout): from the event's first send to now, or to the end of an
    /// event that is over (when it was ended or cancelled), or to the last moment a stage counts a
    /// device if that is later (a device reporting its activity ended after the close).
    public func timeline(app: App, event: Event) async throws -> DeliveryFunnelTimeline {
        let over = event.state == .ended || event.state == .cancelled
        let counted = try await store.deliveryFunnelTimeline(
            appID: app.id,
            eventID: event.id,
            until: over ? event.updatedAt : clock.now
        )
        return DeliveryFunnelTimeline(
            buckets: counted.buckets,
            series: event.environments.sorted { $0.rawValue < $1.rawValue }.map { environment in
                counted.series.first { $0.environment == environment }
                    ?? DeliveryFunnelTimeline.Series(environment: environment)
            }
        )
    }
}
