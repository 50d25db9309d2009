import Foundation

/// What devices say they show, and the funnel it completes.
public protocol PresenceStore: Sendable {
    /// Records `report` as the device's presence for the event (the device being the token row
    /// `tokenRowID` of `appID`), replacing the last one, unless the device has already reported
    /// `bound.maximumReports` times in its current window (`nil`: no bound, for reports Marquee
    /// infers itself, such as an activity's update token).
    func recordPresence(
        appID: AppID,
        eventID: EventID,
        tokenRowID: Int64,
        _ report: PresenceReport,
        bound: PresenceRateBound?,
        at: Date
    ) async throws -> PresenceRecording

    func presence(appID: AppID, eventID: EventID, tokenRowID: Int64) async throws -> DevicePresence?

    /// Whether the event's start ledger has the device, and whether a start of the event got no
    /// answer for it and it has none since.
    func startStanding(appID: AppID, eventID: EventID, tokenRowID: Int64) async throws -> DeviceStartStanding

    /// The event's funnel per environment where any stage counts a device, in one query.
    func deliveryFunnels(appID: AppID, eventID: EventID) async throws -> [DeliveryFunnel]

    /// The event's funnel over time, in one query: buckets from its first send to `until` (or the
    /// last moment a stage counts a device, if later), per environment where a stage counts a
    /// device; the last bucket's counts equal `deliveryFunnels`' for the same stages.
    func deliveryFunnelTimeline(appID: AppID, eventID: EventID, until: Date) async throws -> DeliveryFunnelTimeline
}
