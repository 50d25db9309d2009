import Foundation

/// What a schedule does when its time comes.
public enum ScheduleKind: String, Sendable, Hashable, Codable, CaseIterable {
    /// A start on an audience (as `POST /v1/events/{eventKey}/starts` would do it).
    case start
    /// An update broadcast to the event's channels.
    case broadcast
    /// An end broadcast to the event's channels.
    case end
    /// The event's channels created at APNs (a timeline step).
    case channels
    /// The event closed and its channels deleted (a timeline step).
    case close
}

/// Who asked for a schedule.
public enum ScheduleOrigin: String, Sendable, Hashable, Codable, CaseIterable {
    /// A producer, through the API.
    case api
    /// The event's timeline (`timeline.automatic`).
    case timeline
}

/// An action due at a time: a start, a broadcast or an end a producer asked for, or a step of an
/// event's timeline. A job of kind `JobKind.schedule` with the same ID wakes a worker at `dueAt`;
/// the schedule holds what to do, where it is (`ScheduleState`) and what came of it.
public struct Schedule: Sendable, Hashable {
    public var id: ScheduleID
    public var appID: AppID
    public var eventID: EventID
    public var kind: ScheduleKind
    public var origin: ScheduleOrigin
    /// When the action is due.
    public var dueAt: Date
    public var state: ScheduleState
    /// What to do, in the engine's own encoding (the start or the broadcast as accepted); empty for
    /// timeline steps, which read the event's timeline when they run.
    public var request: JSONValue
    /// What came of it, in the engine's own encoding: the start's job IDs, the broadcast's report, or
    /// why it was skipped.
    public var outcome: JSONValue?
    /// Why the last attempt failed, for people. Never holds secrets.
    public var lastError: String?
    /// How many times a worker began it (more than one only after a worker stopped mid-way).
    public var attempts: Int
    /// When a worker performed it (succeeded, failed or skipped).
    public var performedAt: Date?
    public var createdAt: Date
    public var updatedAt: Date

    public init(
        id: ScheduleID = ScheduleID(),
        appID: AppID,
        eventID: EventID,
        kind: ScheduleKind,
        origin: ScheduleOrigin = .api,
        dueAt: Date,
        state: ScheduleState = .pending,
        request: JSONValue = .object([:]),
        outcome: JSONValue? = nil,
        lastError: String? = nil,
        attempts: Int = 0,
        performedAt: Date? = nil,
        createdAt: Date,
        updatedAt: Date? = nil
    ) {
        self.id = id
        self.appID = appID
        self.eventID = eventID
        self.kind = kind
        self.origin = origin
        self.dueAt = dueAt
        self.state = state
        self.request = request
        self.outcome = outcome
        self.lastError = lastError
        self.attempts = attempts
        self.performedAt = performedAt
        self.createdAt = createdAt
        self.updatedAt = updatedAt ?? createdAt
    }

    /// The job that wakes a worker for this schedule: same ID, due at the schedule's time.
    public var job: Job {
        Job(id: JobID(id.uuid), appID: appID, kind: .schedule, dueAt: dueAt, createdAt: createdAt)
    }
}

/// A position in an event's schedule list (by due time): the (`dueAt`, `id`) of the last one seen.
public struct ScheduleListPosition: Sendable, Hashable {
    public var dueAt: Date
    public var id: ScheduleID

    public init(dueAt: Date, id: ScheduleID) {
        self.dueAt = dueAt
        self.id = id
    }
}
