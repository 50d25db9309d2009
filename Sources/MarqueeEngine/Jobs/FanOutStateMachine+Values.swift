import Foundation
import MarqueeAPNS
import MarqueeCore

/// The values `FanOutStateMachine` takes and answers.
extension FanOutStateMachine {
    struct Configuration: Sendable, Hashable {
        /// Final outcomes per committed batch.
        var batchSize: Int = 500
        /// How long a final outcome waits for its commit at most, however few wait with it: what a
        /// crash can leave uncertain is bounded in time as well as in count.
        var commitInterval: Duration = .milliseconds(250)
        /// Sends per token, the first included, when APNs keeps answering "later".
        var maximumAttempts: Int = 3
        /// Tokens waiting for a retry at most; past it the run stops and the job is retried later
        /// as a whole (APNs is refusing most of what it gets).
        var retryBacklogLimit: Int = 10_000
        /// The first retry's delay; each further one doubles it.
        var retryBaseDelay: Duration = .seconds(1)
        var retryMaximumDelay: Duration = .seconds(60)
    }

    /// How a device's start asks for later updates.
    enum StartKind: Sendable, Hashable {
        /// `input-push-channel`: iOS 18 and later, with the event's channel.
        case channel
        /// `input-push-token: 1`: iOS 17.2–17.x, or everyone when asked; the activity is recorded
        /// as starting so the update token the app reports is kept for it.
        case updateToken
    }

    /// One send to one token.
    struct Send: Sendable, Hashable {
        var tokenRowID: Int64
        var token: String
        var kind: StartKind
        var attempt: Int
        /// The priority chosen for this token when it differs by token (an activity's budget);
        /// `nil` sends the job's.
        var priority: APNSPriority? = nil
        /// Sent at 5 because the activity had used its budget of priority-10 pushes.
        var downgraded = false
        /// An earlier send of this start got no answer (this run's, or a crashed run's within its
        /// reservation) and it is sent again under `UncertainStartPolicy.resend`: the device may
        /// end with two, so the token counts in `JobProgress.uncertain` whatever this send's outcome.
        var mayHaveArrived = false
        /// Earlier sends of this start that got no answer and were sent again under `.resend`: they
        /// are not among the attempts `maximumAttempts` counts.
        var unanswered = 0

        /// The sends APNs answered (or refused to take): what `maximumAttempts` bounds.
        var answeredAttempts: Int { attempt - unanswered }
    }

    /// What APNs made of a send, in the state machine's terms.
    enum SendResult: Sendable, Hashable {
        case accepted(apnsID: UUID?)
        case failed(APNSError)
        /// The send was handed to the client and no answer came back (`why` says what was seen):
        /// it may have reached APNs. An `APNSError` of class `.uncertain` means the same.
        case uncertain(why: String)
    }

    /// What a failed send means for its token, from the APNs error's class
    /// (`FanOutStateMachine+APNSError.swift`).
    enum FailureVerdict: Sendable, Hashable {
        /// Try again later (429, 5xx, no connection, a provider token to renew).
        case later
        /// The token is dead (410, or a device token APNs does not know).
        case tokenDead
        /// Refused for good.
        case rejected
        /// Written to APNs, no answer: the device may or may not have it.
        case uncertain
    }

    /// A batch to commit, all or nothing.
    struct Batch: Sendable, Hashable {
        var deliveries: [Delivery]
        var invalidations: [Int64: TokenInvalidation]
        /// Accepted `input-push-token` starts: (token row) whose activity is recorded as starting.
        var startedWithUpdateToken: [Int64]
        /// Accepted sends at priority 10 (token rows), which count against their activity's budget.
        var acceptedAtImmediate: [Int64] = []
        var progress: JobProgress
        var checkpoint: Int64?

        var isEmpty: Bool { deliveries.isEmpty && checkpoint == nil }

        /// No outcomes, no checkpoint.
        static let empty = Batch(
            deliveries: [],
            invalidations: [:],
            startedWithUpdateToken: [],
            progress: JobProgress()
        )
    }

    /// What the run does once the current round of sends has ended.
    enum NextStep: Sendable, Hashable {
        /// Every token has a final outcome.
        case complete
        /// Send the tokens waiting for a retry once `at` has come.
        case retry(at: Date)
        /// Too many tokens wait for a retry: stop, and let the job run again at `at`.
        case rescheduleJob(at: Date)
    }

    /// One audience row as the policy would have it sent: to which token, as which kind of start,
    /// at which priority (when it is decided per token), and whether an earlier send of it may
    /// have arrived already.
    struct PageRow: Sendable, Hashable {
        var rowID: Int64
        var token: String
        var kind: StartKind
        var priority: PriorityDecision? = nil
        var mayHaveArrived = false
    }

    /// What becomes of a send that may have reached the device (written, no answer), as the job's
    /// `FanOutPolicy` decides.
    enum Unanswered: Sendable, Hashable {
        /// Sent again like a "later", using up an attempt: the device drops a repeat.
        case later
        /// Sent again after a back-off without using up an attempt, marked as may have arrived.
        case resend
        /// Final as `uncertain`.
        case final
    }
}
