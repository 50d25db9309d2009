import Foundation

/// Why a start waits in the pending-start queue.
public enum PendingStartReason: String, Sendable, Hashable, CaseIterable {
    /// The token was registered or refreshed while the event was live.
    case lateJoin = "late_join"
    /// The device's start ended uncertain, and its app then reported no activity there once the
    /// start had had time to arrive (`confirm` policy): it gets the start once more.
    case absent
}

/// What a late joiner of an event gets in one environment: decided by the latest start that
/// decided it (`LateJoinOffer` is written when a start job is created).
public struct LateJoinOffer: Sendable, Hashable {
    public var appID: AppID
    public var eventID: EventID
    public var environment: APNSEnvironment
    public var attributesType: String
    public var enabled: Bool
    /// The whole environment, or (when false) only tokens carrying any of `tags`.
    public var everyone: Bool
    public var tags: [String]
    public var attributes: JSONObject
    /// The start's own content-state. Reading an offer gives the newest content-state the event
    /// broadcast in the environment instead, when it broadcast one.
    public var contentState: JSONObject
    /// The alert chosen for late joiners; `nil` for none.
    public var alert: JSONObject?
    public var inputPushToken: Bool
    /// The start job that wrote the offer.
    public var jobID: JobID
    public var updatedAt: Date

    public init(
        appID: AppID,
        eventID: EventID,
        environment: APNSEnvironment,
        attributesType: String,
        enabled: Bool,
        everyone: Bool,
        tags: [String],
        attributes: JSONObject,
        contentState: JSONObject,
        alert: JSONObject?,
        inputPushToken: Bool,
        jobID: JobID,
        updatedAt: Date
    ) {
        self.appID = appID
        self.eventID = eventID
        self.environment = environment
        self.attributesType = attributesType
        self.enabled = enabled
        self.everyone = everyone
        self.tags = tags
        self.attributes = attributes
        self.contentState = contentState
        self.alert = alert
        self.inputPushToken = inputPushToken
        self.jobID = jobID
        self.updatedAt = updatedAt
    }
}

/// A start waiting to be sent to one token, as a pump claimed it.
public struct PendingStart: Sendable, Hashable {
    public var id: Int64
    public var appID: AppID
    public var eventID: EventID
    public var environment: APNSEnvironment
    public var tokenRowID: Int64
    /// The token, lower-case hex: what the start job's audience names.
    public var token: String
    public var reason: PendingStartReason
    public var pendingSince: Date
    /// For `absent`: the start job whose uncertain start this one makes up for (its attributes are
    /// sent again); `nil` for late joiners.
    public var sourceJobID: JobID?

    public init(
        id: Int64,
        appID: AppID,
        eventID: EventID,
        environment: APNSEnvironment,
        tokenRowID: Int64,
        token: String,
        reason: PendingStartReason,
        pendingSince: Date,
        sourceJobID: JobID? = nil
    ) {
        self.id = id
        self.appID = appID
        self.eventID = eventID
        self.environment = environment
        self.tokenRowID = tokenRowID
        self.token = token
        self.reason = reason
        self.pendingSince = pendingSince
        self.sourceJobID = sourceJobID
    }
}

/// The queue of starts waiting to be sent (late joiners now), and what a late joiner gets.
public protocol PendingStartStore: Sendable {
    /// Writes the event's offer in the environment (replacing the previous one).
    func recordLateJoinOffer(_ offer: LateJoinOffer) async throws
    /// The offer, its `contentState` the newest one APNs accepted in a broadcast of the event in
    /// that environment, else the start's own; `nil` if no start decided one.
    func lateJoinOffer(appID: AppID, eventID: EventID, environment: APNSEnvironment) async throws -> LateJoinOffer?

    /// The late-join hook, after the registrations committed: queues each registered token (valid,
    /// in the app) for every event that is live in its environment and attributes type (`live`, or
    /// `scheduled` with a start in its ledger; never ended or cancelled), has late joining on (the
    /// event's flag and its offer), and whose offer's audience the token matches (everyone, or any
    /// of its tags), unless the event's start ledger holds the token or it is queued already.
    /// Returns how many rows it queued. On PostgreSQL a queued row wakes every replica's pump.
    func enqueueLateJoiners(appID: AppID, _ tokens: [RegisteredTokenKey], at: Date) async throws -> Int

    /// Removes pending starts that will never be sent: their event is ended or cancelled, the token
    /// is invalid or the event's ledger holds it, or (late joiners only) late joining is off for
    /// it. Returns how many.
    func prunePendingStarts() async throws -> Int

    /// Claims up to `limit` pending starts, oldest first, for `owner` until `until`: rows nobody
    /// claims (or whose claim lapsed by `now`) of events with no start job of theirs in that
    /// environment pending or running (such a job may reach the token itself: the row waits for
    /// it to finish, then the ledger says). Concurrent callers never claim the same row.
    func claimPendingStarts(owner: String, now: Date, until: Date, limit: Int) async throws -> [PendingStart]

    /// In one transaction: removes the pending starts `ids` that `owner` still holds a claim on
    /// (lasting past `at`), and enqueues `jobs` (a start job and its parts) if it holds them all;
    /// `StoreError.notActive` (entity "pending start") and nothing written if it no longer does.
    func enqueueJobs(_ jobs: [Job], consumingPendingStarts ids: [Int64], owner: String, at: Date) async throws

    /// Removes the pending starts `ids` (held by `owner`) without sending them: their event cannot be started.
    func dropPendingStarts(_ ids: [Int64], owner: String) async throws

    /// The pending starts of the event in the environment, claimed or not (what inspection and tests read).
    func pendingStartCount(appID: AppID, eventID: EventID, environment: APNSEnvironment) async throws -> Int

    /// How many devices late-join start jobs started for the event in the environment (their
    /// entries in the event's start ledger): what the funnel counts as "late joiners started".
    func lateJoinStartCount(appID: AppID, eventID: EventID, environment: APNSEnvironment) async throws -> Int
}
