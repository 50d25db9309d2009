import Foundation

/// What a device says ActivityKit shows for an event.
public enum PresenceState: String, Sendable, Hashable, Codable, CaseIterable {
    /// The event's activity is on the device (with ActivityKit's ID).
    case showing
    /// The activity ended (by the app, an end push, or its dismissal date).
    case ended
    /// The user dismissed the activity.
    case dismissed
    /// The app runs, the event is live, the device is in its audience and no activity is there.
    case absent
}

/// One report from the app: the device's own state for an event, nothing more.
public struct PresenceReport: Sendable, Hashable {
    public var environment: APNSEnvironment
    public var state: PresenceState
    /// ActivityKit's `Activity.id`; required for `showing`.
    public var activityID: String?

    public init(environment: APNSEnvironment, state: PresenceState, activityID: String? = nil) {
        self.environment = environment
        self.state = state
        self.activityID = activityID
    }
}

/// What Marquee records of a device's word for an event: the last report, one per (event, device
/// row). The same report again changes nothing but `reportedAt`.
public struct DevicePresence: Sendable, Hashable {
    public var eventID: EventID
    /// The device's push-to-start token row (the start ledger's unit, which follows a rotation).
    public var tokenRowID: Int64
    public var environment: APNSEnvironment
    public var state: PresenceState
    public var activityID: String?
    public var firstReportedAt: Date
    public var reportedAt: Date

    public init(
        eventID: EventID,
        tokenRowID: Int64,
        environment: APNSEnvironment,
        state: PresenceState,
        activityID: String?,
        firstReportedAt: Date,
        reportedAt: Date
    ) {
        self.eventID = eventID
        self.tokenRowID = tokenRowID
        self.environment = environment
        self.state = state
        self.activityID = activityID
        self.firstReportedAt = firstReportedAt
        self.reportedAt = reportedAt
    }
}

/// How often one device may report for one event: at most `maximumReports` in a fixed window of
/// `window` that begins with the first report after the previous window ended.
public struct PresenceRateBound: Sendable, Hashable {
    public var maximumReports: Int
    public var window: Duration

    public init(maximumReports: Int, window: Duration = .seconds(60)) {
        self.maximumReports = max(1, maximumReports)
        self.window = window
    }

    /// Reports per minute, the setting's unit.
    public static func perMinute(_ reports: Int) -> PresenceRateBound {
        PresenceRateBound(maximumReports: reports)
    }

    /// Whole seconds from `now` until a window that began at `windowStartedAt` ends; at least 1.
    public func retryAfterSeconds(windowStartedAt: Date, now: Date) -> Int {
        let remaining = windowStartedAt.addingTimeInterval(window.timeInterval).timeIntervalSince(now)
        return max(1, Int(remaining.rounded(.up)))
    }
}

/// What recording a report came to.
public enum PresenceRecording: Sendable, Hashable {
    /// Recorded; the device's presence as it is now.
    case recorded(DevicePresence)
    /// The device passed its bound: nothing was recorded. `windowStartedAt` is when the window
    /// that is full began.
    case limited(windowStartedAt: Date)
}

/// Where a device stands in an event's starts: what the start ledger and the start jobs' outcomes
/// say of it.
public struct DeviceStartStanding: Sendable, Hashable {
    /// APNs accepted a start of the event for the device (the start ledger has it).
    public var started: Bool
    /// A start of the event was written to APNs for the device and got no answer, and the ledger
    /// has no start for it since.
    public var uncertain: Bool

    public init(started: Bool, uncertain: Bool) {
        self.started = started
        self.uncertain = uncertain
    }
}
