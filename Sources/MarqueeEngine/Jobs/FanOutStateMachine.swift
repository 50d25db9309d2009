import Foundation
import MarqueeAPNS
import MarqueeCore

/// The decisions of one fan-out run (the starts of a start job, or the device pushes of an
/// activity-update job), apart from its I/O (as PostgresNIO keeps
/// `PoolStateMachine` apart from `ConnectionPool`): what each APNs outcome means, when a batch is
/// committed and with which checkpoint, what is retried and when. What differs between kinds of
/// job is its `FanOutPolicy`'s: a start job's (`StartOutcomePolicy`) says which start each device
/// gets, which tokens an earlier run may have sent and what becomes of a start that got no answer.
///
/// The runner feeds it audience pages (in token-row order) and outcomes (in any order), and does
/// what it answers. A token's outcome is final when it is accepted, rejected, its token is dead, its
/// last retry failed, or it got no answer and the policy makes that final; only final outcomes are
/// committed. The checkpoint is the highest token row below which every token has a committed final
/// outcome, so a resumption from it (which also skips tokens in the start ledger or with a final
/// outcome of this job) sends again only what was in flight or waiting for a retry.
struct FanOutStateMachine {
    let configuration: Configuration
    let jobID: JobID
    /// What this kind of job decides for itself: unanswered sends, update tokens to keep.
    let policy: any FanOutPolicy

    /// The current round's sends by their outcome index.
    private(set) var round: [Int: Send] = [:]
    private var nextIndex = 0
    /// Tokens sent and not yet final, or final but not yet committed: they hold the checkpoint back.
    private var unsettled: [Int64: Int] = [:]
    private(set) var waitingForRetry: [(send: Send, readyAt: Date)] = []
    private var highestRowSeen: Int64?
    private(set) var pending = Batch.empty
    /// The checkpoint of the last batch taken (or the job's, before any).
    private(set) var lastCheckpoint: Int64?
    /// When the oldest outcome waiting for its commit became final.
    private(set) var oldestPendingAt: Date?

    init(
        configuration: Configuration,
        jobID: JobID,
        policy: any FanOutPolicy,
        checkpoint: Int64?
    ) {
        self.configuration = configuration
        self.jobID = jobID
        self.policy = policy
        self.lastCheckpoint = checkpoint
        self.highestRowSeen = checkpoint
    }

    // MARK: Rounds

    /// A new round of sends begins: outcome indices count from 0 again.
    mutating func beginRound() {
        precondition(round.isEmpty, "a round began while sends of the last one were unanswered")
        nextIndex = 0
    }

    /// An audience page is about to be sent (rows as the job's policy has them sent); returns the
    /// sends, in the page's order.
    mutating func pageRead(_ rows: [PageRow]) -> [Send] {
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

    /// A page of update tokens (one per activity, keyed by the activity's row) is about to be
    /// sent; returns the sends, in the page's order.
    mutating func pageRead(updateTokens rows: [(rowID: Int64, token: String, priority: PriorityDecision)]) -> [Send] {
        pageRead(rows.map { PageRow(rowID: $0.rowID, token: $0.token, kind: .updateToken, priority: $0.priority) })
    }

    /// Tokens of a page that are not sent because they may have been already: final as
    /// `uncertain` at once, committed with the next batch. A start job's are those an earlier run
    /// handed to APNs and never committed an outcome for (`StartOutcomePolicy.page`).
    mutating func uncertainUnsent(_ rowIDs: [Int64], now: Date) {
        for rowID in rowIDs {
            unsettled[rowID, default: 0] += 1
            highestRowSeen = max(highestRowSeen ?? rowID, rowID)
            pending.deliveries.append(
                Delivery(
                    jobID: jobID,
                    tokenRowID: rowID,
                    attempt: 1,
                    outcome: .uncertain,
                    sentAt: now,
                    completedAt: now
                )
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
            if policy.keepsUpdateToken(ofAccepted: send) { pending.startedWithUpdateToken.append(send.tokenRowID) }
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
                finish(
                    send,
                    outcome: .tokenInvalid,
                    status: rejection?.status,
                    apnsID: apnsID,
                    reason: rejection?.reason,
                    now: now
                )
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
                finish(
                    send,
                    outcome: .rejected,
                    status: rejection?.status,
                    apnsID: apnsID,
                    reason: rejection?.reason,
                    now: now
                )
            }
        }
    }

    /// A "later": sent again after a back-off, until the last attempt fails it.
    private mutating func later(_ send: Send, rejection: APNSRejection?, apnsID: UUID?, now: Date) {
        if send.answeredAttempts < configuration.maximumAttempts {
            waitingForRetry.append((send, now.addingTimeInterval(retryDelay(afterAttempt: send.attempt))))
        } else {
            finish(
                send,
                outcome: .failed,
                status: rejection?.status,
                apnsID: apnsID,
                reason: rejection?.reason,
                now: now
            )
        }
    }

    /// A send that may have reached the device: the policy says whether it is sent again like a
    /// "later", resent without using up an attempt (then through the start ledger: see
    /// `retryRowsDue`), or final as `uncertain`.
    private mutating func uncertain(_ send: Send, now: Date) {
        switch policy.unanswered(send) {
        case .later:
            later(send, rejection: nil, apnsID: nil, now: now)
        case .resend:
            var resend = send
            resend.mayHaveArrived = true
            resend.unanswered += 1
            waitingForRetry.append((resend, now.addingTimeInterval(retryDelay(afterAttempt: send.attempt))))
        case .final:
            finish(send, outcome: .uncertain, status: nil, apnsID: nil, reason: nil, now: now)
        }
    }

    /// Every send of the round that has no outcome (the transport gave up on it without one): it
    /// may have been written, so it is unanswered, as its policy decides.
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

    // MARK: Commits

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
        pending = Batch.empty
        oldestPendingAt = nil
        return batch
    }
}
