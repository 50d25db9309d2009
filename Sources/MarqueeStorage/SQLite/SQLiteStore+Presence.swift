import Foundation
import MarqueeCore
import SQLiteNIO

extension SQLiteStore {
    private static func placeholder(_ index: Int) -> String { "?\(index)" }

    public func recordPresence(
        appID: AppID,
        eventID: EventID,
        tokenRowID: Int64,
        _ report: PresenceReport,
        bound: PresenceRateBound?,
        at: Date
    ) async throws -> PresenceRecording {
        try await write { connection in
            let binds: [SQLiteData] = [
                .id(appID), .id(eventID), .int(tokenRowID), .text(report.environment.rawValue),
                .text(report.state.rawValue),
                .text(report.activityID), .date(at),
                .date(bound.map { at.addingTimeInterval(-$0.window.timeInterval) }),
                .int(bound?.maximumReports ?? 0),
            ]
            if let recorded = try await connection.query(PresenceQueries.record(Self.placeholder), binds).first
                .mapped(PresenceQueries.presence)
            {
                return .recorded(recorded)
            }
            // Nothing written: the window is full, or the event or the token row is not the app's.
            guard
                let row = try await connection.query(
                    "SELECT window_started_at FROM device_presence WHERE app_id = ? AND event_id = ? AND token_id = ?",
                    [.id(appID), .id(eventID), .int(tokenRowID)]
                ).first
            else { throw StoreError.notFound(entity: "push-to-start token", id: "#\(tokenRowID)") }
            return .limited(
                windowStartedAt: try SQLiteColumns(row, entity: "device presence").date("window_started_at")
            )
        }
    }

    public func presence(appID: AppID, eventID: EventID, tokenRowID: Int64) async throws -> DevicePresence? {
        try await query(
            """
            SELECT \(PresenceQueries.presenceColumns) FROM device_presence WHERE app_id = ? AND event_id = ? AND \
            token_id = ?
            """,
            [.id(appID), .id(eventID), .int(tokenRowID)]
        ).first.mapped(PresenceQueries.presence)
    }

    public func startStanding(appID: AppID, eventID: EventID, tokenRowID: Int64) async throws -> DeviceStartStanding {
        guard
            let row = try await query(
                PresenceQueries.standing(Self.placeholder),
                Self.eventBinds(appID: appID, eventID: eventID) + [.int(tokenRowID)]
            ).first
        else { return DeviceStartStanding(started: false, uncertain: false) }
        let columns = SQLiteColumns(row, entity: "start standing")
        let started = try columns.int64("started") == 1
        let uncertain = try columns.int64("uncertain") == 1
        return DeviceStartStanding(started: started, uncertain: !started && uncertain)
    }

    public func deliveryFunnels(appID: AppID, eventID: EventID) async throws -> [DeliveryFunnel] {
        let rows = try await query(
            PresenceQueries.funnel(Self.placeholder),
            Self.eventBinds(appID: appID, eventID: eventID)
        )
        return try PresenceQueries.funnels(
            rows.map { row in
                let columns = SQLiteColumns(row, entity: "funnel")
                return (
                    try columns.string("environment"), try columns.string("stage"), try columns.string("reason"),
                    try columns.int64("devices")
                )
            }
        )
    }

    public func deliveryFunnelTimeline(
        appID: AppID,
        eventID: EventID,
        until: Date
    ) async throws -> DeliveryFunnelTimeline {
        let binds =
            Self.eventBinds(appID: appID, eventID: eventID) + [
                .date(until), .int(DeliveryFunnelTimeline.stepDivisorMicroseconds),
            ]
        // Times are integer microseconds in SQLite already.
        let rows = try await query(PresenceQueries.timeline(Self.placeholder) { $0 }, binds)
        return try PresenceQueries.timeline(try rows.mapped(PresenceQueries.TimelineRow.init))
    }

    /// Parameters 1 to 5 of the funnel's statements: the app, the event, the event as the jobs'
    /// arguments carry it, and the two kinds of start job.
    private static func eventBinds(appID: AppID, eventID: EventID) -> [SQLiteData] {
        [
            .id(appID), .id(eventID), .text(eventID.description), .text(JobKind.startFanOut.rawValue),
            .text(JobKind.startFanOutPartition.rawValue),
        ]
    }
}
