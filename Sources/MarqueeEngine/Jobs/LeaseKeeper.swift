import Foundation
import MarqueeCore

/// The decisions that keep a fan-out run's lease honest, apart from its I/O: when to renew, until
/// when the run may hand sends to the APNs client, and when it has stalled. `FanOutRunner`'s watch
/// feeds it what happened (on the injected clock) and does what `verdict(now:)` says.
///
/// The store computes a lease's expiry from the `now` a request carries: a lease granted or renewed
/// by a request asked at T lasts until T + `leaseDuration`, however late the answer comes. So the
/// run counts its lease valid until the asking time of its last successful renewal (or of the lease
/// itself) plus the lease, less `safetyMargin` (for a send already on its way to the socket, and for
/// clocks); past that another replica may hold the part, and the run must have stopped sending.
///
/// The lease is kept only while the run moves: one that makes no progress (no outcome, page or
/// commit) for `stallTimeout` gives its lease up, so a run stuck on a call that never returns cannot
/// keep its part from every other replica by renewing its lease on the side.
struct LeaseKeeper: Sendable {
    struct Configuration: Sendable, Hashable {
        var leaseDuration: Duration
        /// How long after the last renewal was asked the next one is: a third of the lease, so two
        /// may fail before the lease could lapse.
        var renewInterval: Duration
        /// How long before the lease could lapse the run stops handing out sends.
        var safetyMargin: Duration
        /// How long the run may go without progress before it gives its lease up.
        var stallTimeout: Duration

        init(leaseDuration: Duration, stallTimeout: Duration) {
            self.leaseDuration = leaseDuration
            renewInterval = leaseDuration / 3
            safetyMargin = leaseDuration / 5
            self.stallTimeout = stallTimeout
        }
    }

    /// Why a run stops sending.
    enum Fence: Sendable, Hashable, CustomStringConvertible {
        /// The store refused a renewal: the job was cancelled or another replica holds it.
        case refused
        /// A renewal failed (the store unreachable, a connection closed): the lease may still hold,
        /// but not for long.
        case renewalFailed(String)
        /// The lease could lapse within the safety margin, for this reason.
        case lapsing(LapseCause)
        /// No progress for the stall timeout.
        case stalled(Duration)

        var description: String {
            switch self {
            case .refused: "the store refused to renew the lease (the job was cancelled or another replica holds it)"
            case .renewalFailed(let error): "renewing the lease failed (\(error))"
            case .lapsing(let cause): "the lease could not be renewed before it could lapse (\(cause))"
            case .stalled(let timeout): "the part made no progress for \(timeout.wholeMilliseconds) ms"
            }
        }
    }

    /// Why no renewal kept the lease: what tells a slow store from a starved process in the log.
    enum LapseCause: Sendable, Hashable, CustomStringConvertible {
        /// A renewal was asked this long ago and has not been answered (a slow or unreachable store).
        case renewalUnanswered(for: Duration)
        /// The last renewal failed; none is asked after a failure.
        case renewalFailed(String)
        /// No renewal was asked for this long, though one was due: the run's watch did not get to
        /// run (a process starved of CPU).
        case renewalNotAsked(for: Duration)

        var description: String {
            switch self {
            case .renewalUnanswered(let waited): "a renewal asked \(waited.wholeMilliseconds) ms ago is unanswered"
            case .renewalFailed(let error): "the last renewal failed: \(error)"
            case .renewalNotAsked(let waited): "no renewal was asked for \(waited.wholeMilliseconds) ms"
            }
        }
    }

    /// What the run does now.
    enum Verdict: Sendable, Hashable {
        /// Go on; nothing to do until the next look.
        case carryOn
        /// Ask the store to renew the lease (then report with `renewalSucceeded`, `…Refused`, `…Failed`).
        case renew
        /// Hand out no new sends; let those in flight be answered and commit their outcomes while the
        /// lease holds, then hand the job back.
        case stopSending(Fence)
        /// Stop at once: cancel what has not been written, commit nothing more, give the lease up.
        case abandon(Fence)
    }

    let configuration: Configuration
    /// Until when sends may be handed out: the last successful ask plus the lease, less the margin.
    private(set) var validUntil: Date
    private var lastAskedAt: Date
    private var renewalAskedAt: Date?
    private var lastProgressAt: Date
    /// The first reason the run stopped sending, if it did.
    private(set) var fence: Fence?

    /// - Parameters:
    ///   - leaseExpiresAt: the expiry the store gave the lease (`Job.lease`), from which the time
    ///     the lease was asked follows.
    init(configuration: Configuration, leaseExpiresAt: Date, now: Date) {
        self.configuration = configuration
        let askedAt = leaseExpiresAt.addingTimeInterval(-configuration.leaseDuration.timeInterval)
        lastAskedAt = askedAt
        validUntil = leaseExpiresAt.addingTimeInterval(-configuration.safetyMargin.timeInterval)
        lastProgressAt = now
    }

    // MARK: What happened

    mutating func renewalAsked(at now: Date) {
        renewalAskedAt = now
        lastAskedAt = now
    }

    /// The renewal asked at `askedAt` succeeded: the lease holds until `askedAt` plus the lease.
    mutating func renewalSucceeded(askedAt: Date) {
        renewalAskedAt = nil
        validUntil = max(
            validUntil,
            askedAt.addingTimeInterval((configuration.leaseDuration - configuration.safetyMargin).timeInterval)
        )
    }

    mutating func renewalRefused() {
        renewalAskedAt = nil
        fence = .refused
    }

    mutating func renewalFailed(_ error: String) {
        renewalAskedAt = nil
        if fence == nil { fence = .renewalFailed(error) }
    }

    /// The run moved (an outcome, a page, a commit), or is idle on purpose until `at` (a retry's
    /// due time: the stall timeout counts from then).
    mutating func progressed(at: Date) {
        lastProgressAt = max(lastProgressAt, at)
    }

    // MARK: Decisions

    /// Whether the run may hand a new send to the APNs client now.
    func mayHandOutSends(now: Date) -> Bool {
        sendingStopped(now: now) == nil
    }

    /// Why the run may hand out no new send now (`nil`: it may): the fence, or a lease that could
    /// lapse before a renewal kept it.
    func sendingStopped(now: Date) -> Fence? {
        if let fence { return fence }
        return now >= validUntil ? .lapsing(lapseCause(now: now)) : nil
    }

    private func lapseCause(now: Date) -> LapseCause {
        func since(_ date: Date) -> Duration { .milliseconds(Int64((now.timeIntervalSince(date) * 1000).rounded())) }
        if let renewalAskedAt { return .renewalUnanswered(for: since(renewalAskedAt)) }
        // After a failed renewal none is asked (the run stops sending), so the fence holds its error.
        if case .renewalFailed(let error)? = fence { return .renewalFailed(error) }
        return .renewalNotAsked(for: since(lastAskedAt.addingTimeInterval(configuration.renewInterval.timeInterval)))
    }

    func verdict(now: Date) -> Verdict {
        if fence == .refused { return .abandon(.refused) }
        if now >= validUntil { return .abandon(.lapsing(lapseCause(now: now))) }
        if now >= lastProgressAt.addingTimeInterval(configuration.stallTimeout.timeInterval) {
            return .abandon(.stalled(configuration.stallTimeout))
        }
        if let fence { return .stopSending(fence) }
        if renewalAskedAt == nil, now >= lastAskedAt.addingTimeInterval(configuration.renewInterval.timeInterval) {
            return .renew
        }
        return .carryOn
    }
}

extension JobWorkerConfiguration {
    var leaseKeeping: LeaseKeeper.Configuration {
        LeaseKeeper.Configuration(leaseDuration: leaseDuration, stallTimeout: stallTimeout)
    }

    /// How often a run's watch looks at its lease (on the injected clock): often enough to stop well
    /// within the safety margin.
    var watchInterval: Duration {
        min(.milliseconds(100), leaseKeeping.safetyMargin / 4)
    }

    /// How often a round looks for a commit that fell due while no outcome arrived.
    var flushInterval: Duration {
        max(.milliseconds(5), min(.milliseconds(100), fanOut.commitInterval / 2))
    }
}
