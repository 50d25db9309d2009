import Foundation

/// Live Activities on devices and their update tokens.
public protocol ActivityStore: Sendable {
    func recordActivity(_ activity: Activity) async throws
    func activity(appID: AppID, id: ActivityRecordID) async throws -> Activity?
    func activity(appID: AppID, activityID: String) async throws -> Activity?
    /// Records what the device reported: its ActivityKit ID, a (possibly rotated) update token and
    /// whether frequent pushes are enabled. The previous current token is retired in the same step.
    func recordUpdateToken(
        appID: AppID,
        id: ActivityRecordID,
        activityID: String,
        token: String,
        frequentPushesEnabled: Bool,
        at: Date
    ) async throws -> Activity
    func setActivityState(appID: AppID, id: ActivityRecordID, state: ActivityState, at: Date) async throws -> Bool
    /// Takes the next `aps.timestamp` for a device push to the activity, atomically, like
    /// `ChannelStore.nextBroadcastTimestamp`.
    func nextActivityTimestamp(appID: AppID, id: ActivityRecordID, now: Int64) async throws -> Int64

    /// Takes the next `aps.timestamp` of the event's pushes in `environment` when it has no
    /// channel there (with one, the channel's sequence serves): starts, then updates, strictly
    /// increasing, `MonotonicTimestamp.next`, atomically.
    func nextEventTimestamp(
        appID: AppID,
        eventID: EventID,
        environment: APNSEnvironment,
        now: Int64
    ) async throws -> Int64

    /// The activity a start job recorded as `starting` for the device with this push-to-start
    /// token, for the event and environment: the record the app's first update-token report adopts.
    func startingActivity(
        appID: AppID,
        eventID: EventID,
        environment: APNSEnvironment,
        pushToStartToken: String
    ) async throws -> Activity?

    /// The activities an update job pushes to, in row order after `cursor`, at most `limit`.
    func updateAudiencePage(
        _ query: ActivityUpdateQuery,
        after cursor: Int64,
        limit: Int
    ) async throws -> [ActivityUpdateTarget]
    /// How many activities the query reaches, and the latest timestamp any of them was sent.
    func updateAudience(_ query: ActivityUpdateQuery) async throws -> ActivityUpdateAudience
    /// Records a batch of an update job's outcomes in one transaction, if `leaseOwner` still
    /// holds the job (`StoreError.leaseLost` otherwise): accepted activities' last timestamp,
    /// their priority-10 windows, ended activities, the job's progress and checkpoint.
    func commitActivityUpdateBatch(_ batch: ActivityUpdateBatch, at: Date) async throws
}

/// The activities of an event that take device pushes: not ended, with a current update token,
/// not on a channel (the channel's broadcast reaches those).
public struct ActivityUpdateQuery: Sendable, Hashable {
    public var appID: AppID
    public var eventID: EventID
    public var environment: APNSEnvironment
    /// Leaves out activities already sent a push at this timestamp or later: a resumed job skips
    /// what it sent, and an older update never follows a newer one.
    public var sentBefore: Int64?

    public init(appID: AppID, eventID: EventID, environment: APNSEnvironment, sentBefore: Int64? = nil) {
        self.appID = appID
        self.eventID = eventID
        self.environment = environment
        self.sentBefore = sentBefore
    }
}

/// The size of an update job's audience, and its newest push.
public struct ActivityUpdateAudience: Sendable, Hashable {
    public var count: Int64
    /// The highest `aps.timestamp` sent to one of them (their start's, or an update's).
    public var latestTimestamp: Int64?

    public init(count: Int64, latestTimestamp: Int64?) {
        self.count = count
        self.latestTimestamp = latestTimestamp
    }
}

/// One activity an update job pushes to.
public struct ActivityUpdateTarget: Sendable, Hashable {
    /// The activity's row number: the job's keyset cursor and checkpoint.
    public var rowID: Int64
    public var id: ActivityRecordID
    /// The current update token, as hex.
    public var token: String
    public var lastTimestampSent: Int64?
    public var frequentPushesEnabled: Bool
    /// The activity's latest hour of accepted priority-10 pushes; `nil` before the first.
    public var priorityWindow: ActivityPriorityWindow?

    public init(
        rowID: Int64,
        id: ActivityRecordID,
        token: String,
        lastTimestampSent: Int64?,
        frequentPushesEnabled: Bool = false,
        priorityWindow: ActivityPriorityWindow? = nil
    ) {
        self.rowID = rowID
        self.id = id
        self.token = token
        self.lastTimestampSent = lastTimestampSent
        self.frequentPushesEnabled = frequentPushesEnabled
        self.priorityWindow = priorityWindow
    }
}

/// An activity's hour of priority-10 device pushes: when it began and how many APNs accepted in
/// it. A fixed window per activity: it begins with the first accepted priority-10 push after the
/// previous one ended.
public struct ActivityPriorityWindow: Sendable, Hashable {
    public var start: Date
    public var sent: Int

    public init(start: Date, sent: Int) {
        self.start = start
        self.sent = sent
    }
}

/// A batch of an update job's outcomes.
public struct ActivityUpdateBatch: Sendable, Hashable {
    public var appID: AppID
    public var jobID: JobID
    public var leaseOwner: String
    /// The job's `aps.timestamp`; an activity sent more recently got its own, one past its last.
    public var timestamp: Int64
    /// Rows APNs accepted the push for: their last timestamp moves to the one sent.
    public var accepted: [Int64]
    /// Rows whose activity is over: an accepted `end`, or an update token APNs says is dead
    /// without a 410's timestamp to judge it by.
    public var ended: [Int64]
    /// Rows whose update token APNs answered 410 for: each activity ends only if
    /// `TokenInvalidation.endsActivity(currentUpdateToken:receivedAt:)` holds for its current
    /// update token as the commit finds it.
    public var invalidatedUpdateTokens: [Int64: TokenInvalidation]
    /// Rows APNs accepted a priority-10 push for: each counts one into its activity's window, or
    /// opens a new window (at the commit's time, with 1) when its window began at or before
    /// `priorityWindowsEndedAt` or it had none.
    public var acceptedAtImmediate: [Int64]
    /// Windows that began at or before this time are over (the commit's time less an hour).
    public var priorityWindowsEndedAt: Date
    public var progress: JobProgress
    public var checkpoint: String?
    /// Fixed across the batch's retries (see `DeliveryBatch.commitID`).
    public var commitID: UUID

    public init(
        appID: AppID,
        jobID: JobID,
        leaseOwner: String,
        timestamp: Int64,
        accepted: [Int64],
        ended: [Int64],
        invalidatedUpdateTokens: [Int64: TokenInvalidation] = [:],
        acceptedAtImmediate: [Int64] = [],
        priorityWindowsEndedAt: Date = .distantPast,
        progress: JobProgress,
        checkpoint: String?,
        commitID: UUID = UUID.random()
    ) {
        self.appID = appID
        self.jobID = jobID
        self.leaseOwner = leaseOwner
        self.timestamp = timestamp
        self.commitID = commitID
        self.accepted = accepted
        self.ended = ended
        self.invalidatedUpdateTokens = invalidatedUpdateTokens
        self.acceptedAtImmediate = acceptedAtImmediate
        self.priorityWindowsEndedAt = priorityWindowsEndedAt
        self.progress = progress
        self.checkpoint = checkpoint
    }
}
