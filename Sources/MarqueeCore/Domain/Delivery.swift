import Foundation

/// How one push to one token ended.
public enum DeliveryOutcome: String, Sendable, Hashable, Codable, CaseIterable {
    /// APNs answered 200.
    case accepted
    /// APNs refused it for good (4xx other than 429); `reason` says why.
    case rejected
    /// The token is gone (410); the token may have been retired.
    case tokenInvalid = "token_invalid"
    /// A transient failure (429, 5xx, connection loss) after the last retry.
    case failed
    /// Not sent on purpose (already started, filtered out).
    case skipped
    /// Written to APNs, then no answer (the connection closed or was reset, a timeout, a GOAWAY that
    /// covered it): the device may or may not have it. A start that ends so is not sent again unless
    /// the job's policy says so (`jobs.uncertainStarts`), since a second start is a second activity.
    case uncertain
}

/// One push of a job to one token.
public struct Delivery: Sendable, Hashable {
    public var jobID: JobID
    public var tokenRowID: Int64
    /// 1 for the first try.
    public var attempt: Int
    public var outcome: DeliveryOutcome
    public var status: Int?
    /// The `apns-id` APNs answered with.
    public var apnsID: UUID?
    public var reason: APNSErrorReason?
    public var sentAt: Date
    public var completedAt: Date

    public init(
        jobID: JobID,
        tokenRowID: Int64,
        attempt: Int = 1,
        outcome: DeliveryOutcome,
        status: Int? = nil,
        apnsID: UUID? = nil,
        reason: APNSErrorReason? = nil,
        sentAt: Date,
        completedAt: Date
    ) {
        self.jobID = jobID
        self.tokenRowID = tokenRowID
        self.attempt = attempt
        self.outcome = outcome
        self.status = status
        self.apnsID = apnsID
        self.reason = reason
        self.sentAt = sentAt
        self.completedAt = completedAt
    }
}

/// What a fan-out worker commits after a window of sends, all or nothing: the outcomes, the start
/// ledger entries for accepted starts, the activities those starts began, 410 retirements, the
/// progress and the checkpoint. The commit is refused if the worker no longer holds the job's lease.
public struct DeliveryBatch: Sendable, Hashable {
    public var appID: AppID
    public var jobID: JobID
    public var leaseOwner: String
    public var deliveries: [Delivery]
    /// The event whose start ledger records accepted starts; `nil` for non-start jobs.
    public var startedEventID: EventID?
    /// Activities that accepted starts sent with `input-push-token` began, recorded as
    /// `starting` (in `startedEventID`) so that the update token the app reports is kept for them.
    public var startingActivities: StartingActivities?
    /// 410 verdicts by token row.
    public var invalidations: [Int64: TokenInvalidation]
    public var progress: JobProgress
    public var checkpoint: String?
    /// Fixed across the batch's retries: a commit that was applied although its answer was lost
    /// is recognised when it is sent again, and changes nothing the second time.
    public var commitID: UUID

    public init(
        appID: AppID,
        jobID: JobID,
        leaseOwner: String,
        deliveries: [Delivery],
        startedEventID: EventID? = nil,
        startingActivities: StartingActivities? = nil,
        invalidations: [Int64: TokenInvalidation] = [:],
        progress: JobProgress,
        checkpoint: String?,
        commitID: UUID = UUID.random()
    ) {
        self.appID = appID
        self.jobID = jobID
        self.leaseOwner = leaseOwner
        self.deliveries = deliveries
        self.commitID = commitID
        self.startedEventID = startedEventID
        self.startingActivities = startingActivities
        self.invalidations = invalidations
        self.progress = progress
        self.checkpoint = checkpoint
    }
}

/// The activities a batch of accepted `input-push-token` starts began: one per push-to-start token,
/// each taking the token's frequent-pushes flag until the app reports its own.
public struct StartingActivities: Sendable, Hashable {
    public var environment: APNSEnvironment
    /// The start's `aps.timestamp`: the activity's newest so far.
    public var lastTimestampSent: Int64
    public var pushToStartTokenRowIDs: [Int64]

    public init(environment: APNSEnvironment, lastTimestampSent: Int64, pushToStartTokenRowIDs: [Int64]) {
        self.environment = environment
        self.lastTimestampSent = lastTimestampSent
        self.pushToStartTokenRowIDs = pushToStartTokenRowIDs
    }
}

/// How many of a job's deliveries ended one way (and for one reason).
public struct DeliveryCount: Sendable, Hashable {
    public var outcome: DeliveryOutcome
    public var reason: APNSErrorReason?
    public var count: Int64

    public init(outcome: DeliveryOutcome, reason: APNSErrorReason?, count: Int64) {
        self.outcome = outcome
        self.reason = reason
        self.count = count
    }
}
