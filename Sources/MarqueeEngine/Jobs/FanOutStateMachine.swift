import Foundation
import MarqueeAPNS
import MarqueeCore

/// The decisions of one fan-out run (the starts of a start job, or the device pushes of an
/// activity-update job), apart from its I/O (as PostgresNIO keeps
/// `PoolStateMachine` apart from `ConnectionPool`): which start each device gets, what each APNs
/// outcome means, when a batch is committed and with which checkpoint, what is retried and when.
///
/// The runner feeds it audience pages (in token-row order) and outcomes (in any order), and does
/// what it answers. A token's outcome is final when it is accepted, rejected, its token is dead, its
/// last retry failed, or (a start) it is uncertain and the job's `UncertainStartPolicy` does not
/// send it again; only final outcomes are committed. The checkpoint is the highest token row
/// below which every token has a committed final outcome, so a resumption from it (which also skips
/// tokens in the start ledger or with a final outcome of this job) sends again only what was in
/// flight or waiting for a retry.
struct FanOutStateMachine {
    /// Under `UncertainStartPolicy.resend`, how many times a start that got no answer is sent again.
    /// Unanswered sends do not use up `Configuration.maximumAttempts`, which counts APNs' answers: a
    /// device must not be left without its start because resets and crashes cut off its sends as
    /// often as APNs asked for a retry (a 50,000-device chaos run left 2 devices without a start that
    /// way, at 3 attempts). A bound still, for a connection that loses every write.
    static let maximumUnansweredResends = 10

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

    let configuration: Configuration
    let jobID: JobID
    let hasChannel: Bool
    let everyoneGetsUpdateToken: Bool
    /// What a start job does with a start that got no answer; `nil` for jobs whose pushes a device
    /// drops when it has them already (updates and ends carry a timestamp), which are sent again
    /// like a "later".
    let uncertainStarts: UncertainStartPolicy?

    /// The current round's sends by their outcome index.
    private var round: [Int: Send] = [:]
    private var nextIndex = 0
    /// Tokens sent and not yet final, or final but not yet committed: they hold the checkpoint back.
    private var unsettled: [Int64: Int] = [:]
    private var waitingForRetry: [(send: Send, readyAt: Date)] = []
    private var highestRowSeen: Int64?
    private var pending = Batch(deliveries: [], invalidations: [:], startedWithUpdateToken: [], progress: JobProgress())
    /// The checkpoint of the last batch taken (or the job's, before any).
    private(set) var lastCheckpoint: Int64?
    /// When the oldest outcome waiting for its commit became final.
    private var oldestPendingAt: Date?

    init(
        configuration: Configuration,
        jobID: JobID,
        hasChannel: Bool,
        everyoneGetsUpdateToken: Bool,
        uncertainStarts: UncertainStartPolicy? = nil,
        checkpoint: Int64?
    ) {
        self.configuration = configuration
        self.jobID = jobID
        self.hasChannel = hasChannel
        self.everyoneGetsUpdateToken = everyoneGetsUpdateToken
        self.uncertainStarts = uncertainStarts
        self.lastCheckpoint = checkpoint
        self.highestRowSeen = checkpoint
    }

    /// The start a device gets: a channel from iOS 18 on (when the event has one and the job did not
    /// ask for update tokens), an update token otherwise. An unknown version gets an update token,
    /// which every iOS that has push-to-start understands.
    func kind(forIOSVersion version: String?) -> StartKind {
        guard hasChannel, !everyoneGetsUpdateToken, let version,
            let major = Int(version.split(separator: ".", maxSplits: 1).first ?? "")
        else { return .updateToken }
        return major >= 18 ? .channel : .updateToken
    }

    // MARK: Rounds

    /// A new round of sends begins: outcome indices count from 0 again.
    mutating func beginRound() {
        precondition(round.isEmpty, "a round began while sends of the last one were unanswered")
        nextIndex = 0
    }

    /// An audience page is about to be sent; returns the sends, in the page's order. Tokens through
    /// `mayHaveArrivedThrough` (a crashed run's reservation, sent again under `.resend`) may have had
    /// their start already.
    mutating func pageRead(_ recipients: [AudienceRecipient], mayHaveArrivedThrough: Int64? = nil) -> [Send] {
        readSends(
            recipients.map { recipient in
                (
                    rowID: recipient.rowID,
                    token: recipient.token,
                    kind: kind(forIOSVersion: recipient.iosVersion),
                    priority: nil,
                    mayHaveArrived: mayHaveArrivedThrough.map { recipient.rowID <= $0 } ?? false
                )
            }
        )
    }

    /// A page of update tokens (one per activity, keyed by the activity's row) is about to be
    /// sent; returns the sends, in the page's order.
    mutating func pageRead(updateTokens rows: [(rowID: Int64, token: String, priority: PriorityDecision)]) -> [Send] {
        readSends(rows.map { (rowID: $0.rowID, token: $0.token, kind: StartKind.updateToken, priority: Optional($0.priority), mayHaveArrived: false) })
    }

    /// `priority`: the token's own decision, when the job's priority is decided per token.
    private mutating func readSends(
        _ rows: [(rowID: Int64, token: String, kind: StartKind, priority: PriorityDecision?, mayHaveArrived: Bool)]
    ) -> [Send] {
        var sends: [Send] = []
        sends.reserveCapacity(rows.count)
        for row in rows {
            let send = Send(
                tokenRowID: row.rowID,
                token: row.token,
                kind: row.kind,
                attempt: 1,
                priority: row.priority?.priority,
                downgraded: row.priority?.downgraded ?? false,
                mayHaveArrived: row.mayHaveArrived
            )
            register(send)
            sends.append(send)
            highestRowSeen = max(highestRowSeen ?? row.rowID, row.rowID)
        }
        return sends
    }

    /// Tokens of a page that an earlier run of the job handed to APNs and never committed an
    /// outcome for (after the checkpoint, through its reservation, neither in the start ledger nor
    /// final in the job): it may have sent them before it crashed. Under `UncertainStartPolicy.skip`
    /// they are not sent: their outcome is final as `uncertain` at once, committed with the next batch.
    mutating func uncertainFromEarlierRun(_ rowIDs: [Int64], now: Date) {
        for rowID in rowIDs {
            unsettled[rowID, default: 0] += 1
            highestRowSeen = max(highestRowSeen ?? rowID, rowID)
            pending.deliveries.append(
                Delivery(jobID: jobID, tokenRowID: rowID, attempt: 1, outcome: .uncertain, sentAt: now, completedAt: now)
            )
            if pending.deliveries.count == 1 { oldestPendingAt = now }
            pending.progress.attempted += 1
            pending.progress.uncertain += 1
        }
    }

    /// The `count` retries `retriesDue` registered last were never handed to the client (the run
    /// stopped sending before their round went out): they wait for their retry again, as they were,
    /// due at `now`. Left in the round they would end it without an outcome, as uncertain, though
    /// never written.
    mutating func retriesNotSent(_ count: Int, now: Date) {
        for var send in removeLastRegistered(count) {
            send.attempt -= 1
            waitingForRetry.append((send, now))
        }
    }

    /// The last `count` sends registered were never handed to the client (the run stopped sending
    /// in the middle of a page): they leave the round as if never read, so they hold nothing back
    /// and count as nothing; `resumeAfter` is the row before the first of them.
    mutating func withdrawUnsent(_ count: Int, resumeAfter: Int64) {
        guard count > 0 else { return }
        for send in removeLastRegistered(count) {
            let remaining = (unsettled[send.tokenRowID] ?? 1) - 1
            unsettled[send.tokenRowID] = remaining > 0 ? remaining : nil
        }
        highestRowSeen = resumeAfter
    }

    /// Takes the last `count` sends registered out of the round, in the order they were registered.
    private mutating func removeLastRegistered(_ count: Int) -> [Send] {
        guard count > 0 else { return [] }
        let removed = ((nextIndex - count)..<nextIndex).compactMap { round.removeValue(forKey: $0) }
        nextIndex -= count
        return removed
    }

    /// The token rows whose retry is due at `now`: a start job asks the start ledger which of them
    /// have started since (another job of the event), and passes them to `retriesDue`.
    func retryRowsDue(now: Date) -> [Int64] {
        waitingForRetry.filter { $0.readyAt <= now }.map(\.send.tokenRowID)
    }

    /// The tokens whose retry is due at `now`, as one page of sends. Those in `alreadyStarted` (the
    /// start ledger holds them) are not sent: their outcome is final as `skipped`.
    mutating func retriesDue(now: Date, alreadyStarted: Set<Int64> = []) -> [Send] {
        var due: [Send] = []
        var later: [(send: Send, readyAt: Date)] = []
        for entry in waitingForRetry {
            if alreadyStarted.contains(entry.send.tokenRowID) {
                finish(entry.send, outcome: .skipped, status: nil, apnsID: nil, reason: nil, now: now)
            } else if entry.readyAt <= now {
                var send = entry.send
                send.attempt += 1
                due.append(send)
            } else {
                later.append(entry)
            }
        }
        waitingForRetry = later
        for send in due { register(send, alreadyUnsettled: true) }
        return due
    }

    private mutating func register(_ send: Send, alreadyUnsettled: Bool = false) {
        round[nextIndex] = send
        nextIndex += 1
        if !alreadyUnsettled { unsettled[send.tokenRowID, default: 0] += 1 }
    }

    // MARK: Outcomes

    /// APNs answered the send at `index` of this round.
    mutating func outcome(index: Int, _ result: SendResult, now: Date) {
        guard let send = round.removeValue(forKey: index) else { return }
        switch result {
        case .accepted(let apnsID):
            finish(send, outcome: .accepted, status: 200, apnsID: apnsID, reason: nil, now: now)
            if send.kind == .updateToken { pending.startedWithUpdateToken.append(send.tokenRowID) }
            if send.priority == .immediate { pending.acceptedAtImmediate.append(send.tokenRowID) }
        case .uncertain:
            uncertain(send, now: now)
        case .failed(let error):
            let rejection: APNSRejection? = if case .rejected(let rejection) = error { rejection } else { nil }
            let apnsID = rejection?.apnsID.flatMap(UUID.init(canonical:))
            switch Self.verdict(error) {
            case .later:
                later(send, rejection: rejection, apnsID: apnsID, now: now)
            case .uncertain:
                uncertain(send, now: now)
            case .tokenDead:
                finish(send, outcome: .tokenInvalid, status: rejection?.status, apnsID: apnsID, reason: rejection?.reason, now: now)
                // Only a 410 with APNs' timestamp can retire a token, and only if that time is newer
                // than the token's last registration (the store checks that against the row).
                if let rejection, rejection.status == 410, let milliseconds = rejection.timestampMilliseconds {
                    pending.invalidations[send.tokenRowID] = TokenInvalidation(
                        reason: rejection.reason,
                        apnsTimestampMilliseconds: milliseconds,
                        token: send.token
                    )
                }
            case .rejected:
                finish(send, outcome: .rejected, status: rejection?.status, apnsID: apnsID, reason: rejection?.reason, now: now)
            }
        }
    }

    /// A "later": sent again after a back-off, until the last attempt fails it.
    private mutating func later(_ send: Send, rejection: APNSRejection?, apnsID: UUID?, now: Date) {
        if send.answeredAttempts < configuration.maximumAttempts {
            waitingForRetry.append((send, now.addingTimeInterval(retryDelay(afterAttempt: send.attempt))))
        } else {
            finish(send, outcome: .failed, status: rejection?.status, apnsID: apnsID, reason: rejection?.reason, now: now)
        }
    }

    /// A send that may have reached the device. A start is final as `uncertain` under `.skip` and
    /// `.confirm` (whose confirmation job then asks the device); under
    /// `.resend` it is sent again after a back-off, like a "later" but without using up an attempt
    /// (through the start ledger: see `retryRowsDue`), until it is answered or has gone unanswered
    /// `maximumUnansweredResends` times more: then it is final as `uncertain`. Other pushes
    /// (timestamped: a device drops a repeat) are a plain "later".
    private mutating func uncertain(_ send: Send, now: Date) {
        switch uncertainStarts {
        case nil:
            later(send, rejection: nil, apnsID: nil, now: now)
        case let policy? where policy.resendsInJob && send.unanswered < Self.maximumUnansweredResends:
            var resend = send
            resend.mayHaveArrived = true
            resend.unanswered += 1
            waitingForRetry.append((resend, now.addingTimeInterval(retryDelay(afterAttempt: send.attempt))))
        case .some:
            finish(send, outcome: .uncertain, status: nil, apnsID: nil, reason: nil, now: now)
        }
    }

    /// Every send of the round that has no outcome (the transport gave up on it without one): it
    /// may have been written, so it is uncertain (for a job without a policy, a "later").
    mutating func roundEnded(now: Date) {
        for index in round.keys.sorted() {
            outcome(index: index, .uncertain(why: "the client gave no outcome"), now: now)
        }
    }

    private mutating func finish(
        _ send: Send,
        outcome: DeliveryOutcome,
        status: Int?,
        apnsID: UUID?,
        reason: APNSErrorReason?,
        now: Date
    ) {
        pending.deliveries.append(
            Delivery(
                jobID: jobID,
                tokenRowID: send.tokenRowID,
                attempt: send.attempt,
                outcome: outcome,
                status: status,
                apnsID: apnsID,
                reason: reason,
                sentAt: now,
                completedAt: now
            )
        )
        if pending.deliveries.count == 1 { oldestPendingAt = now }
        pending.progress.attempted += 1
        if send.downgraded { pending.progress.downgraded += 1 }
        // A token resent after an unanswered start counts as uncertain too: its device may show two.
        if send.mayHaveArrived && outcome != .uncertain { pending.progress.uncertain += 1 }
        switch outcome {
        case .accepted: pending.progress.succeeded += 1
        case .uncertain: pending.progress.uncertain += 1
        // Not sent: the start ledger already holds the token (another job of the event started it).
        case .skipped: break
        case .rejected, .tokenInvalid, .failed: pending.progress.failed += 1
        }
    }

    func retryDelay(afterAttempt attempt: Int) -> TimeInterval {
        Duration.backoff(initial: configuration.retryBaseDelay, maximum: configuration.retryMaximumDelay, step: attempt).timeInterval
    }


    // MARK: Commits

    /// Whether the outcomes waiting should be committed now: a batch's worth of them, or any that
    /// has waited `commitInterval`.
    func commitIsDue(now: Date) -> Bool {
        guard let oldestPendingAt, !pending.deliveries.isEmpty else { return false }
        return pending.deliveries.count >= configuration.batchSize
            || now >= oldestPendingAt.addingTimeInterval(configuration.commitInterval.timeInterval)
    }

    /// The outcomes so far, with the checkpoint they allow; what is returned counts as committed.
    mutating func takeBatch() -> Batch {
        for delivery in pending.deliveries {
            let remaining = (unsettled[delivery.tokenRowID] ?? 1) - 1
            unsettled[delivery.tokenRowID] = remaining > 0 ? remaining : nil
        }
        var batch = pending
        let checkpoint: Int64? = if let lowest = unsettled.keys.min() { lowest - 1 } else { highestRowSeen }
        if let checkpoint, checkpoint > (lastCheckpoint ?? 0) {
            batch.checkpoint = checkpoint
            lastCheckpoint = checkpoint
        }
        pending = Batch(deliveries: [], invalidations: [:], startedWithUpdateToken: [], progress: JobProgress())
        oldestPendingAt = nil
        return batch
    }

    /// What to do after a round, once its batch is committed.
    func nextStep(now: Date) -> NextStep {
        guard let earliest = waitingForRetry.map(\.readyAt).min() else { return .complete }
        if waitingForRetry.count > configuration.retryBacklogLimit { return .rescheduleJob(at: earliest) }
        return .retry(at: earliest)
    }

    /// Whether the retry backlog is past its limit (the runner stops feeding pages then).
    var retryBacklogIsFull: Bool { waitingForRetry.count > configuration.retryBacklogLimit }

    var waitingForRetryCount: Int { waitingForRetry.count }
    var inFlightCount: Int { round.count }
}
