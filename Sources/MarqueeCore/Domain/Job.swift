import Foundation

/// What a job does. Open-ended so that later flows add kinds without a schema change.
public struct JobKind: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public var rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public var description: String { rawValue }

    public static let createChannel = JobKind(rawValue: "channel.create")
    public static let deleteChannel = JobKind(rawValue: "channel.delete")
    public static let reconcileChannels = JobKind(rawValue: "channel.reconcile")
    /// A start fan-out as the API shows it: its work is done by its `startFanOutPartition` jobs.
    public static let startFanOut = JobKind(rawValue: "activity.start")
    /// One partition of a start fan-out's audience, leased and resumed on its own, so that
    /// replicas share one fan-out.
    public static let startFanOutPartition = JobKind(rawValue: "activity.start.partition")
    /// The confirmation of a start job's uncertain starts (`jobs.uncertainStarts=confirm`): asks
    /// each uncertain device's app, then acts on its answer. Not a part of the start job: the
    /// start finishes without waiting for it.
    public static let confirmStarts = JobKind(rawValue: "activity.start.confirm")
    public static let broadcast = JobKind(rawValue: "channel.broadcast")
    /// An update or end pushed to each activity of an event that is not on a channel, through
    /// its update token.
    public static let activityUpdate = JobKind(rawValue: "activity.update")
    /// Wakes a worker when a `Schedule` with the same ID is due.
    public static let schedule = JobKind(rawValue: "schedule")
    public static let endEvent = JobKind(rawValue: "event.end")
}

/// Where a job is.
public enum JobState: String, Sendable, Hashable, Codable, CaseIterable {
    /// Waiting for its due time or for a worker.
    case pending
    /// Leased by a worker; if the lease expires another worker may take it over.
    case running
    case succeeded
    case failed
    case cancelled

    public var isFinished: Bool { self == .succeeded || self == .failed || self == .cancelled }
}

/// A worker's claim on a job until `expiresAt`.
public struct JobLease: Sendable, Hashable {
    /// The worker (replica and slot) holding the job.
    public var owner: String
    public var expiresAt: Date

    public init(owner: String, expiresAt: Date) {
        self.owner = owner
        self.expiresAt = expiresAt
    }
}

/// Counters a job keeps while it works through its audience.
public struct JobProgress: Sendable, Hashable {
    /// Tokens with a final outcome (accepted, rejected, token gone, failed after the last retry,
    /// uncertain).
    public var attempted: Int64
    public var succeeded: Int64
    public var failed: Int64
    /// The audience's size when the job was created; `nil` for jobs without an audience.
    public var total: Int64?
    /// Tokens the job's 410s retired (the store counts them as it applies the timestamp rule).
    public var retired: Int64
    /// Pushes sent at priority 5 instead of 10 because their activity had used its hourly budget
    /// of priority-10 pushes (activity-update jobs).
    public var downgraded: Int64
    /// Tokens with a start written to APNs that got no answer: the device may or may not have the
    /// activity. One whose outcome is final as `DeliveryOutcome.uncertain` (`skip`, or `resend`'s
    /// last attempt) is counted in `attempted`, neither in `succeeded` nor in `failed`; one sent
    /// again under `UncertainStartPolicy.resend` and then answered counts here and under its answer.
    public var uncertain: Int64

    public init(
        attempted: Int64 = 0,
        succeeded: Int64 = 0,
        failed: Int64 = 0,
        total: Int64? = nil,
        retired: Int64 = 0,
        downgraded: Int64 = 0,
        uncertain: Int64 = 0
    ) {
        self.attempted = attempted
        self.succeeded = succeeded
        self.failed = failed
        self.total = total
        self.retired = retired
        self.downgraded = downgraded
        self.uncertain = uncertain
    }

    public static func + (lhs: JobProgress, rhs: JobProgress) -> JobProgress {
        JobProgress(
            attempted: lhs.attempted + rhs.attempted,
            succeeded: lhs.succeeded + rhs.succeeded,
            failed: lhs.failed + rhs.failed,
            total: lhs.total ?? rhs.total,
            retired: lhs.retired + rhs.retired,
            downgraded: lhs.downgraded + rhs.downgraded,
            uncertain: lhs.uncertain + rhs.uncertain
        )
    }
}

/// A unit of background work: due at a time, leased by one worker at a time, resumable from its
/// checkpoint after a crash.
public struct Job: Sendable, Hashable {
    public var id: JobID
    public var appID: AppID
    public var kind: JobKind
    /// The job this one does a part of (a fan-out's partition); `nil` for jobs of their own.
    public var parentID: JobID?
    public var arguments: JSONValue
    public var dueAt: Date
    public var state: JobState
    public var lease: JobLease?
    /// How many times a worker has leased it.
    public var attempts: Int
    public var progress: JobProgress
    /// Where to resume: opaque to the store (for a fan-out, the last token row done).
    public var checkpoint: String?
    /// Why the last attempt failed, for operators. Never holds secrets.
    public var lastError: String?
    /// The highest token row a run of this fan-out part handed to APNs whose outcome may not be
    /// committed (`nil`: none past the checkpoint). After a crash the tokens after the checkpoint and
    /// through it without a committed outcome may have been sent: they are uncertain.
    public var reservedThrough: Int64?
    /// Jobs with the same key run one after another: one is leased only while no job of another
    /// group (`parentID`, or the job itself) with the key runs or has begun and not finished, and
    /// no older one of another group is due. The parts of one group run side by side. An event's
    /// start parts carry `JobSerialKey.start(of:)`, so that two starts of one event never send to a
    /// device neither has committed yet. `nil`: the job runs whenever it is due.
    public var serialKey: String?
    public var createdAt: Date
    public var updatedAt: Date

    public init(
        id: JobID = JobID(),
        appID: AppID,
        kind: JobKind,
        parentID: JobID? = nil,
        arguments: JSONValue = .object([:]),
        dueAt: Date,
        state: JobState = .pending,
        lease: JobLease? = nil,
        attempts: Int = 0,
        progress: JobProgress = JobProgress(),
        checkpoint: String? = nil,
        lastError: String? = nil,
        reservedThrough: Int64? = nil,
        serialKey: String? = nil,
        createdAt: Date,
        updatedAt: Date? = nil
    ) {
        self.id = id
        self.appID = appID
        self.kind = kind
        self.parentID = parentID
        self.arguments = arguments
        self.dueAt = dueAt
        self.state = state
        self.lease = lease
        self.attempts = attempts
        self.progress = progress
        self.checkpoint = checkpoint
        self.lastError = lastError
        self.serialKey = serialKey
        self.reservedThrough = reservedThrough
        self.createdAt = createdAt
        self.updatedAt = updatedAt ?? createdAt
    }
}
