/// How a replica's job worker leases and runs jobs.
public struct JobWorkerConfiguration: Sendable, Hashable {
    /// How long a lease lasts without renewal; a worker that dies hands its job over after it.
    public var leaseDuration: Duration
    /// How often the worker looks for due jobs when nothing wakes it (LISTEN/NOTIFY on
    /// PostgreSQL, an enqueue in this process).
    public var pollInterval: Duration
    /// How long a run may go without progress (an outcome, a page read, a commit) before it gives its
    /// lease up and the job resumes from its checkpoint, on this replica or another.
    public var stallTimeout: Duration
    /// Jobs one worker runs at once.
    public var concurrency: Int
    /// Tokens read per audience page.
    public var pageSize: Int
    /// Parts a start fan-out's audience is split into, each a job of its own that any replica can
    /// lease: N replicas share one fan-out, and a replica that dies hands over only its parts.
    /// Small audiences get fewer parts (at least a page each).
    public var partitions: Int
    /// Pushes of one fan-out outstanding at APNs at once (`nil`: the client's batch window).
    public var window: Int?
    /// How many times a job that failed (not its pushes: the job, a store or APNs outage) is run
    /// again before it is marked failed.
    public var maximumJobAttempts: Int
    /// What a start job does with starts that were written to APNs and got no answer.
    public var uncertainStarts: UncertainStartPolicy
    /// Under `confirm`: how long a start may take to arrive, and how long the app of an uncertain
    /// device is given to answer.
    public var confirmation: StartConfirmation
    /// Start pushes carry an `apns-collapse-id` per event (`StartCollapseID`), so that APNs holds
    /// only the newest start of an event for an offline device.
    public var startCollapseIDs: Bool
    var fanOut: FanOutStateMachine.Configuration
    /// The pause before a failed commit of outcomes is tried again, doubling after each failure
    /// (`CommitRetryPolicy`). Not a setting: a test gives it a length no other sleep of a run has,
    /// to know when the retry waits.
    var commitRetryFirstDelay: Duration = CommitRetryPolicy.standardFirstDelay

    public init(
        leaseDuration: Duration = .seconds(30),
        pollInterval: Duration = .seconds(2),
        stallTimeout: Duration = .seconds(60),
        commitInterval: Duration = .milliseconds(250),
        concurrency: Int = 4,
        pageSize: Int = 1000,
        partitions: Int = 8,
        window: Int? = nil,
        maximumJobAttempts: Int = 10,
        batchSize: Int = 500,
        maximumAttemptsPerToken: Int = 3,
        retryBaseDelay: Duration = .seconds(1),
        retryMaximumDelay: Duration = .seconds(60),
        uncertainStarts: UncertainStartPolicy = .confirm,
        confirmation: StartConfirmation = StartConfirmation(),
        startCollapseIDs: Bool = true
    ) {
        self.leaseDuration = leaseDuration
        self.pollInterval = pollInterval
        self.stallTimeout = max(.milliseconds(1), stallTimeout)
        self.concurrency = max(1, concurrency)
        self.pageSize = max(1, pageSize)
        self.partitions = max(1, partitions)
        self.window = window
        self.maximumJobAttempts = max(1, maximumJobAttempts)
        self.uncertainStarts = uncertainStarts
        self.confirmation = confirmation
        self.startCollapseIDs = startCollapseIDs
        fanOut = .init(
            batchSize: max(1, batchSize),
            commitInterval: max(.zero, commitInterval),
            maximumAttempts: max(1, maximumAttemptsPerToken),
            retryBaseDelay: retryBaseDelay,
            retryMaximumDelay: max(retryBaseDelay, retryMaximumDelay)
        )
    }
}
