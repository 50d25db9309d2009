import Foundation

/// One device whose start ended uncertain in a start job, as that job's confirmation sees it: what
/// was sent, what the device's app last said, and what the confirmation did so far.
public struct UnconfirmedStart: Sendable, Hashable {
    /// The device's push-to-start token row.
    public var tokenRowID: Int64
    /// The app's APNs device token (hex), if it registered one: without it the app cannot be asked.
    public var deviceToken: String?
    /// When the uncertain start was written to APNs (the latest, if the job wrote it more than once).
    public var sentAt: Date
    /// The device's last report for the event, if any.
    public var presence: PresenceState?
    public var reportedAt: Date?
    /// When the confirmation began watching the device; `nil` before its first look.
    public var watchedSince: Date?
    /// When the confirmation asked the app (a background push); `nil` if it did not.
    public var askedAt: Date?
    /// Whether the device was already sent the event's start again after reporting it absent.
    public var restarted: Bool

    public init(
        tokenRowID: Int64,
        deviceToken: String?,
        sentAt: Date,
        presence: PresenceState?,
        reportedAt: Date?,
        watchedSince: Date?,
        askedAt: Date?,
        restarted: Bool
    ) {
        self.tokenRowID = tokenRowID
        self.deviceToken = deviceToken
        self.sentAt = sentAt
        self.presence = presence
        self.reportedAt = reportedAt
        self.watchedSince = watchedSince
        self.askedAt = askedAt
        self.restarted = restarted
    }
}

/// What became of a device a confirmation watched.
public enum ConfirmationOutcome: String, Sendable, Hashable, CaseIterable {
    /// The app reported the activity showing: the start ledger has the device (confirmed), and
    /// nothing sends it the event's start again.
    case confirmed
    /// The app reported no activity there: the start is queued for it once more (`absent`).
    case restarted
    /// The activity ended or was dismissed on the device: nothing is sent.
    case ended
    /// No answer within the window (or the app could not be asked): the start stays uncertain.
    case uncertain
}

/// What one pass of a confirmation records, in one transaction.
public struct ConfirmationSteps: Sendable, Hashable {
    public var appID: AppID
    public var eventID: EventID
    public var environment: APNSEnvironment
    /// The start job whose uncertain starts are being confirmed.
    public var jobID: JobID
    /// Devices seen for the first time: watched from now.
    public var watched: [Int64] = []
    /// Devices whose app was sent the background push now.
    public var asked: [Int64] = []
    /// Devices decided, with what (`confirmed` ones with when their uncertain start was sent).
    public var decided: [Decision] = []

    public struct Decision: Sendable, Hashable {
        public var tokenRowID: Int64
        public var outcome: ConfirmationOutcome
        public var sentAt: Date

        public init(tokenRowID: Int64, outcome: ConfirmationOutcome, sentAt: Date) {
            self.tokenRowID = tokenRowID
            self.outcome = outcome
            self.sentAt = sentAt
        }
    }

    public init(appID: AppID, eventID: EventID, environment: APNSEnvironment, jobID: JobID) {
        self.appID = appID
        self.eventID = eventID
        self.environment = environment
        self.jobID = jobID
    }

    public var isEmpty: Bool { watched.isEmpty && asked.isEmpty && decided.isEmpty }
}

/// How many devices a start job's confirmation decided each way, and how many it asked.
public struct ConfirmationCounts: Sendable, Hashable {
    public var watched: Int64
    public var asked: Int64
    public var outcomes: [ConfirmationOutcome: Int64]

    public init(watched: Int64 = 0, asked: Int64 = 0, outcomes: [ConfirmationOutcome: Int64] = [:]) {
        self.watched = watched
        self.asked = asked
        self.outcomes = outcomes
    }

    public subscript(outcome: ConfirmationOutcome) -> Int64 { outcomes[outcome] ?? 0 }
    /// Devices still waiting for a decision.
    public var waiting: Int64 { watched - outcomes.values.reduce(0, +) }
}

/// The `confirm` policy's records: which uncertain starts a device resolved, and how.
public protocol StartConfirmationStore: Sendable {
    /// The devices whose start of `jobID` (the job the API shows, and its parts) ended uncertain,
    /// that the event's start ledger does not have and this job's confirmation has not decided, by
    /// token row after `afterRowID`, at most `limit`.
    func unconfirmedStarts(
        appID: AppID,
        eventID: EventID,
        jobID: JobID,
        afterRowID: Int64,
        limit: Int
    ) async throws -> [UnconfirmedStart]

    /// Records one pass: devices watched and asked, and each decision: `confirmed` enters the device
    /// in the event's start ledger (as confirmed, under `jobID`); `restarted` queues a pending start
    /// (`absent`, with `jobID` as its source) unless the device was restarted for the event
    /// before (then it is recorded `uncertain`); on PostgreSQL a queued start wakes every
    /// replica's pump. Returns how many starts it queued.
    func recordConfirmationSteps(_ steps: ConfirmationSteps, at: Date) async throws -> Int

    /// Of `tokenRowIDs`, the devices with an uncertain start of the event and no entry in its
    /// start ledger: late joiners exclude them (their confirmation decides for them).
    func uncertainStartTokens(appID: AppID, eventID: EventID, among tokenRowIDs: [Int64]) async throws -> Set<Int64>

    /// What the confirmation of `jobID` counted so far.
    func confirmationCounts(appID: AppID, jobID: JobID) async throws -> ConfirmationCounts
}
