import Foundation
import MarqueeCore
import PostgresNIO

extension PostgresStore {
    private static func placeholder(_ index: Int) -> String { "$\(index)" }

    public func recordPresence(
        appID: AppID,
        eventID: EventID,
        tokenRowID: Int64,
        _ report: PresenceReport,
        bound: PresenceRateBound?,
        at: Date
    ) async throws -> PresenceRecording {
        var binds = PostgresBindings(capacity: 9)
        binds.append(appID.uuid)
        binds.append(eventID.uuid)
        binds.append(tokenRowID)
        binds.append(report.environment.rawValue)
        binds.append(report.state.rawValue)
        binds.append(report.activityID)
        binds.append(at)
        binds.append(bound.map { at.addingTimeInterval(-$0.window.timeInterval) })
        binds.append(Int64(bound?.maximumReports ?? 0))
        if let recorded = try await rows(
            PostgresQuery(unsafeSQL: PresenceQueries.record(Self.placeholder), binds: binds)
        )
        .first.mapped(PresenceQueries.presence) {
            return .recorded(recorded)
        }
        // Nothing written: the window is full, or the event or the token row is not the app's.
        guard
            let row = try await firstRow(
                """
                SELECT window_started_at FROM device_presence
                WHERE app_id = \(appID.uuid) AND event_id = \(eventID.uuid) AND token_id = \(tokenRowID)
                """
            )
        else { throw StoreError.notFound(entity: "push-to-start token", id: "#\(tokenRowID)") }
        return .limited(windowStartedAt: try row.decode(Date.self))
    }

    public func presence(appID: AppID, eventID: EventID, tokenRowID: Int64) async throws -> DevicePresence? {
        try await firstRow(
            """
            SELECT \(unescaped: PresenceQueries.presenceColumns) FROM device_presence
            WHERE app_id = \(appID.uuid) AND event_id = \(eventID.uuid) AND token_id = \(tokenRowID)
            """
        ).mapped(PresenceQueries.presence)
    }

    public func startStanding(appID: AppID, eventID: EventID, tokenRowID: Int64) async throws -> DeviceStartStanding {
        var binds = Self.eventBinds(appID: appID, eventID: eventID)
        binds.append(tokenRowID)
        guard
            let row = try await firstRow(
                PostgresQuery(unsafeSQL: PresenceQueries.standing(Self.placeholder), binds: binds)
            )
        else {
            return DeviceStartStanding(started: false, uncertain: false)
        }
        let (started, uncertain) = try row.decode((Int32, Int32).self)
        return DeviceStartStanding(started: started == 1, uncertain: started == 0 && uncertain == 1)
    }

    public func deliveryFunnels(appID: AppID, eventID: EventID) async throws -> [DeliveryFunnel] {
        let result = try await wholeAudienceRows(
            PostgresQuery(
                unsafeSQL: PresenceQueries.funnel(Self.placeholder),
                binds: Self.eventBinds(appID: appID, eventID: eventID)
            )
        )
        return try PresenceQueries.funnels(
            result.map { row in
                let (environment, stage, reason, devices) = try row.decode((String, String, String, Int64).self)
                return (environment, stage, reason, devices)
            }
        )
    }

    public func deliveryFunnelTimeline(
        appID: AppID,
        eventID: EventID,
        until: Date
    ) async throws -> DeliveryFunnelTimeline {
        var binds = Self.eventBinds(appID: appID, eventID: eventID)
        binds.append(Self.microseconds(until))
        binds.append(DeliveryFunnelTimeline.stepDivisorMicroseconds)
        let statement = PresenceQueries.timeline(Self.placeholder) {
            "CAST(floor(extract(epoch FROM \($0)) * 1000000) AS bigint)"
        }
        return try PresenceQueries.timeline(
            try await wholeAudienceRows(PostgresQuery(unsafeSQL: statement, binds: binds))
                .mapped(PresenceQueries.TimelineRow.init)
        )
    }

    /// A time as `timeline`'s statement reckons it: whole microseconds since 1970, as PostgreSQL keeps them.
    private static func microseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
    }

    /// Parameters 1 to 5 of the funnel's statements: the app, the event, the event as the jobs'
    /// arguments carry it, and the two kinds of start job.
    static func eventBinds(appID: AppID, eventID: EventID) -> PostgresBindings {
        var binds = PostgresBindings(capacity: 7)
        binds.append(appID.uuid)
        binds.append(eventID.uuid)
        binds.append(eventID.description)
        binds.append(JobKind.startFanOut.rawValue)
        binds.append(JobKind.startFanOutPartition.rawValue)
        return binds
    }
}
