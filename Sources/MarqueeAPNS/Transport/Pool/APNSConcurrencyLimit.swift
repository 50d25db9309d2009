import NIOCore

/// How many requests one connection keeps in flight: what the path needs, not the whole stream
/// budget. A connection reset leaves every start in flight `uncertain`, so a connection holding its
/// full budget (1,000 streams) loses up to that many per reset, while at 5–25 ms answers the rates
/// reached need a few dozen to a few hundred (Little's law: in flight = rate × latency).
///
/// A delay-based limit in the manner of TCP Vegas and the gradient limiters of Netflix's
/// concurrency-limits: answers are gathered into rounds of about half a limit (one decision per
/// round trip, roughly); each round's median latency is compared with the baseline, the lowest
/// round median of the last one to two `baselineWindow`s. Latency near the baseline means nothing
/// queues, so the limit grows (by up to `tolerance`× a round); latency above `tolerance` × the
/// baseline means requests wait in a queue somewhere (the server, the socket, an event loop), so
/// the limit shrinks in proportion (by at most half a round). At rest the limit sits where the
/// round median is `tolerance` × the baseline: rate × latency, plus the headroom that tolerance
/// leaves. Medians, not means, so that a rare slow answer (APNs' latency spikes) moves nothing.
///
/// - It only grows while it is used: a round whose requests never had half the limit in flight
///   says nothing about more (the sender, not the limit, was the bottleneck).
/// - Answers to requests sent before the last decision measured the limit before it and are left
///   out of the next round, so one queue is not answered twice.
/// - The baseline forgets: after a lasting shift of the path's latency (APNs slower, a route
///   change) the old minimum ages out within two windows and the limit recovers.
/// - Never below `floor`, never above the connection's stream budget (which wins over the floor).
///
/// No I/O and no clock of its own: every sample brings its own timestamps.
struct APNSConcurrencyLimit: Sendable {
    struct Settings: Sendable, Hashable {
        /// The least in flight, whatever the latency says (and where a new connection starts).
        var floor: Int
        /// Latency up to this multiple of the baseline counts as no queue.
        var tolerance: Double = 1.5
        /// The baseline is the lowest round median seen in the last one to two windows.
        var baselineWindow: TimeAmount = .seconds(10)
        /// A round is at least this many answers, however small the limit.
        var minimumRoundSamples: Int = 8
        /// How far one round may move the limit: up by at most `tolerance`, down by at most half.
        var smallestGradient: Double = 0.5

        init(floor: Int) {
            self.floor = max(1, floor)
        }
    }

    let settings: Settings
    /// The limit as a real number, so that small gradients add up.
    private var estimate: Double
    /// Latencies (nanoseconds) of the answers in the current round.
    private var round: [Int64] = []
    /// The most requests in flight when any request of the round was sent.
    private var roundPeakInFlight = 0
    /// Requests sent before this measured an earlier limit.
    private var lastDecisionAt: NIODeadline?
    private var baselineWindowStartedAt: NIODeadline?
    private var currentWindowMinimum: Int64?
    private var previousWindowMinimum: Int64?

    init(settings: Settings) {
        self.settings = settings
        estimate = Double(settings.floor)
        round.reserveCapacity(64)
    }

    /// Requests this connection may have in flight now, before the stream budget (the caller takes
    /// the smaller of the two).
    var limit: Int { Int(estimate.rounded()) }

    /// The latency everything is compared with, in nanoseconds; `nil` until a round has ended.
    var baseline: Int64? {
        switch (currentWindowMinimum, previousWindowMinimum) {
        case (let current?, let previous?): min(current, previous)
        case (let current?, nil): current
        case (nil, let previous?): previous
        case (nil, nil): nil
        }
    }

    /// One answered request: written at `sentAt` with `inFlightAtSend` requests in flight on the
    /// connection (itself included), answered at `answeredAt`. `budget` is the connection's stream
    /// budget now (the server's limit, capped by configuration).
    mutating func record(sentAt: NIODeadline, answeredAt: NIODeadline, inFlightAtSend: Int, budget: Int) {
        if let lastDecisionAt, sentAt < lastDecisionAt { return }
        round.append(max(0, (answeredAt - sentAt).nanoseconds))
        roundPeakInFlight = max(roundPeakInFlight, inFlightAtSend)
        guard round.count >= max(settings.minimumRoundSamples, limit / 2) else { return }
        decide(at: answeredAt, budget: budget)
    }

    private mutating func decide(at now: NIODeadline, budget: Int) {
        round.sort()
        let median = round[round.count / 2]
        let wasUsed = roundPeakInFlight * 2 >= limit
        round.removeAll(keepingCapacity: true)
        roundPeakInFlight = 0
        lastDecisionAt = now
        noteBaseline(median, at: now)

        let baseline = max(1, self.baseline ?? median)
        var gradient = settings.tolerance * Double(baseline) / Double(max(1, median))
        gradient = min(settings.tolerance, max(settings.smallestGradient, gradient))
        if !wasUsed { gradient = min(1, gradient) }
        let ceiling = Double(max(1, budget))
        estimate = min(ceiling, max(Double(settings.floor), estimate * gradient))
    }

    /// Keeps the lowest round median of this window and of the one before; a window older than
    /// that is forgotten.
    private mutating func noteBaseline(_ median: Int64, at now: NIODeadline) {
        if let started = baselineWindowStartedAt {
            let elapsed = now - started
            if elapsed >= settings.baselineWindow * 2 {
                // Nothing was measured for two windows: neither minimum is current any more.
                previousWindowMinimum = nil
                currentWindowMinimum = nil
                baselineWindowStartedAt = now
            } else if elapsed >= settings.baselineWindow {
                previousWindowMinimum = currentWindowMinimum
                currentWindowMinimum = nil
                baselineWindowStartedAt = now
            }
        } else {
            baselineWindowStartedAt = now
        }
        currentWindowMinimum = min(currentWindowMinimum ?? median, median)
    }
}
