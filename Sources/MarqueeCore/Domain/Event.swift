import Foundation

/// Where an event is in its life.
public enum EventState: String, Sendable, Hashable, Codable, CaseIterable {
    case scheduled
    case live
    case ended
    case cancelled
}

/// Something with a big audience (a match, a flight, a launch) that Live Activities follow.
public struct Event: Sendable, Hashable {
    public var id: EventID
    public var appID: AppID
    /// The producer's own key for the event, unique per app, so that creating it twice is harmless.
    public var externalKey: String
    public var title: String
    /// The ActivityKit attributes type the event's activities use; push-to-start tokens are per type.
    public var attributesType: String
    /// The environments the event needs a channel in.
    public var environments: Set<APNSEnvironment>
    /// The storage policy of the event's channels.
    public var storagePolicy: MessageStoragePolicy
    /// How broadcasts to the event choose their priority; `nil` follows the server's default.
    public var priorityPolicy: PriorityPolicy?
    public var plannedStart: Date
    public var plannedEnd: Date
    /// Whether (and how) the event's timeline runs by itself; `nil` when the producer never asked.
    public var timeline: EventTimelineSettings?
    /// Whether devices whose push-to-start token arrives while the event is live get its start
    /// (late joiners); each start can still turn it off for its own audience.
    public var lateJoiners: Bool
    public var state: EventState
    public var createdAt: Date
    public var updatedAt: Date

    public init(
        id: EventID = EventID(),
        appID: AppID,
        externalKey: String,
        title: String,
        attributesType: String,
        environments: Set<APNSEnvironment>,
        storagePolicy: MessageStoragePolicy,
        priorityPolicy: PriorityPolicy? = nil,
        plannedStart: Date,
        plannedEnd: Date,
        timeline: EventTimelineSettings? = nil,
        lateJoiners: Bool = true,
        state: EventState = .scheduled,
        createdAt: Date,
        updatedAt: Date? = nil
    ) {
        self.id = id
        self.appID = appID
        self.externalKey = externalKey
        self.title = title
        self.attributesType = attributesType
        self.environments = environments
        self.storagePolicy = storagePolicy
        self.priorityPolicy = priorityPolicy
        self.plannedStart = plannedStart
        self.plannedEnd = plannedEnd
        self.timeline = timeline
        self.lateJoiners = lateJoiners
        self.state = state
        self.createdAt = createdAt
        self.updatedAt = updatedAt ?? createdAt
    }
}
