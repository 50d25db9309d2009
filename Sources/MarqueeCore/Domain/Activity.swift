import Foundation

/// Where a Live Activity on one device is in its life, as far as Marquee knows.
public enum ActivityState: String, Sendable, Hashable, Codable, CaseIterable {
    /// A start was sent and accepted by APNs; the device has not reported back yet.
    case starting
    /// The device reported the activity (and usually an update token).
    case active
    /// An end was sent or the device reported the end.
    case ended
}

/// One update token of an activity. ActivityKit may rotate it; the previous one is retired then.
public struct UpdateTokenRecord: Sendable, Hashable {
    public var token: String
    public var receivedAt: Date
    public var retiredAt: Date?

    public init(token: String, receivedAt: Date, retiredAt: Date? = nil) {
        self.token = token
        self.receivedAt = receivedAt
        self.retiredAt = retiredAt
    }
}

/// A Live Activity running (or started) on one device for one event.
public struct Activity: Sendable, Hashable {
    /// Time-ordered by `createdAt` unless given (`UUID.timeOrdered(at:)`): a start writes its
    /// activities in bulk.
    public var id: ActivityRecordID
    public var appID: AppID
    public var eventID: EventID
    public var environment: APNSEnvironment
    /// ActivityKit's `Activity.id`, once the device reports it.
    public var activityID: String?
    /// The channel the activity subscribed to (iOS 18+), if any.
    public var channelID: ChannelID?
    /// The push-to-start token the activity was started through, if it was started remotely.
    public var pushToStartTokenRowID: Int64?
    /// Oldest first; the last one without `retiredAt` is current.
    public var updateTokens: [UpdateTokenRecord]
    public var state: ActivityState
    /// The last `aps.timestamp` sent to this activity (device pushes), kept strictly increasing.
    public var lastTimestampSent: Int64?
    /// Whether the app reported `ActivityAuthorizationInfo.frequentPushesEnabled` for it (or for
    /// the push-to-start token whose start began it): its budget of priority-10 pushes is larger.
    /// The user can turn it off, and the app's next report says so.
    public var frequentPushesEnabled: Bool
    public var createdAt: Date
    public var updatedAt: Date

    public init(
        id: ActivityRecordID? = nil,
        appID: AppID,
        eventID: EventID,
        environment: APNSEnvironment,
        activityID: String? = nil,
        channelID: ChannelID? = nil,
        pushToStartTokenRowID: Int64? = nil,
        updateTokens: [UpdateTokenRecord] = [],
        state: ActivityState = .starting,
        lastTimestampSent: Int64? = nil,
        frequentPushesEnabled: Bool = false,
        createdAt: Date,
        updatedAt: Date? = nil
    ) {
        self.id = id ?? ActivityRecordID(timeOrderedAt: createdAt)
        self.appID = appID
        self.eventID = eventID
        self.environment = environment
        self.activityID = activityID
        self.channelID = channelID
        self.pushToStartTokenRowID = pushToStartTokenRowID
        self.updateTokens = updateTokens
        self.state = state
        self.lastTimestampSent = lastTimestampSent
        self.frequentPushesEnabled = frequentPushesEnabled
        self.createdAt = createdAt
        self.updatedAt = updatedAt ?? createdAt
    }

    /// The update token to push to now.
    public var currentUpdateToken: String? {
        updateTokens.last(where: { $0.retiredAt == nil })?.token
    }
}
