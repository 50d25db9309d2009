import MarqueeCore
import NIOCore
import NIOHPACK
import Testing

@testable import MarqueeAPNS

/// The pool's decisions without a pool, a connection or a timer: what happens to requests as
/// connections open, fail and close and as answers come back.
@Suite("Pool state machine")
struct APNSPoolStateMachineTests {
    typealias Machine = APNSPoolStateMachine

    static let policy = APNSRetryPolicy(
        maximumAttempts: 3,
        initialDelay: .seconds(1),
        maximumDelay: .seconds(60),
        maximumConnectAttempts: 4
    )

    static func machine(maximumOutstanding: Int = 100, connections: Int = 3) -> Machine {
        Machine(
            settings: .init(
                maximumOutstandingRequests: maximumOutstanding,
                connectionsPerEndpoint: connections,
                retryPolicy: policy
            )
        )
    }

    @Test("a request queued while no connection is open gets one opened, one until a token was accepted")
    func queuedRequestOpensAConnection() throws {
        var machine = Self.machine(connections: 3)
        let sink = RecordingSink()
        #expect(machine.connectionsToOpen(live: 0, anyTokenAccepted: false) == 0, "nothing waits")
        try machine.queue(sink.request(.update))
        #expect(machine.outstanding == 1)
        #expect(machine.connectionsToOpen(live: 0, anyTokenAccepted: false) == 1)
        #expect(machine.connectionsToOpen(live: 1, anyTokenAccepted: false) == 0, "one handshake at a time")
        #expect(machine.connectionsToOpen(live: 1, anyTokenAccepted: true) == 2, "then up to the pool's size")
    }

    @Test("batches are pulled only as far as free streams carry, never past the outstanding bound")
    func pullRoom() throws {
        var machine = Self.machine(maximumOutstanding: 5)
        let sink = RecordingSink()
        #expect(machine.pullRoom(freeStreams: 0) == 1, "one, so that a connection opens")
        #expect(machine.pullRoom(freeStreams: 10) == 5, "the outstanding bound")
        machine.pulled(try sink.request(.update))
        #expect(machine.pullRoom(freeStreams: 0) == 0, "a request waits already: nothing more")
        #expect(machine.pullRoom(freeStreams: 3) == 2, "free streams less what is queued")
    }

    @Test("an answer frees room to pull the next request")
    func answerFreesRoom() throws {
        var machine = Self.machine(maximumOutstanding: 2)
        let sink = RecordingSink()
        machine.pulled(try sink.request(.update, tag: 1))
        machine.pulled(try sink.request(.update, tag: 2))
        let first = try machine.written()
        _ = try machine.written()
        #expect(machine.pullRoom(freeStreams: 10) == 0, "two outstanding, the bound")
        let decision = machine.answered(first, response: .status(200), tokenGeneration: 1)
        let completion = try #require(decision.completion)
        #expect(completion.request.tag == 1)
        #expect((try? completion.result.get())?.status == 200)
        #expect(machine.outstanding == 1)
        #expect(machine.pullRoom(freeStreams: 10) == 1)
    }

    @Test("unprocessed requests go first again, in their order, without counting an attempt")
    func unprocessedRequeued() throws {
        var machine = Self.machine()
        let sink = RecordingSink()
        for tag in 1...3 { try machine.queue(sink.request(.start, tag: tag)) }
        let first = try machine.written()
        let second = try machine.written()
        let ended = machine.requeueUnprocessed([first, second])
        #expect(ended.isEmpty)
        let again = try (1...3).map { _ in try machine.written() }
        #expect(again.map(\.tag) == [1, 2, 3])
        #expect(again.map(\.attempt) == [1, 1, 1])
        #expect(machine.outstanding == 3)
    }

    @Test("an uncertain start ends uncertain and is never sent again")
    func uncertainStartNotRetried() throws {
        var machine = Self.machine()
        let sink = RecordingSink()
        try machine.queue(sink.request(.start))
        let start = try machine.written()
        let outcome = machine.leftUncertain(start, reason: "connection reset")
        let completion = try #require(outcome.completion)
        #expect(completion.result.failure == .uncertain("connection reset"))
        #expect(machine.outstanding == 0)
        #expect(!machine.hasQueuedRequests)
    }

    @Test("an uncertain update is sent again after a back-off, and stays uncertain if no answer decides it")
    func uncertainUpdateRetried() throws {
        var machine = Self.machine()
        let sink = RecordingSink()
        try machine.queue(sink.request(.update))
        var request = try machine.written()
        for attempt in 1..<Self.policy.maximumAttempts {
            let outcome = machine.leftUncertain(request, reason: "GOAWAY")
            let timer = try #require(outcome.retryTimer)
            #expect(timer.delay <= Self.policy.ceilingDelay(beforeRetry: attempt))
            #expect(!machine.hasQueuedRequests, "it waits out its back-off")
            machine.retryTimerFired(timer.id)
            request = try machine.written()
            #expect(request.attempt == attempt + 1)
        }
        // Its last attempt is answered 503: retryable, but no attempts are left, and an earlier
        // one may have arrived.
        let last = machine.answered(request, response: .rejected(503, "ServiceUnavailable"), tokenGeneration: 1)
        #expect(last.completion?.result.failure == .uncertain("GOAWAY"))
        #expect(machine.outstanding == 0)
    }

    @Test("a retryable rejection backs off with growing delays and ends rejected after the last attempt")
    func retryLaterBacksOff() throws {
        var machine = Self.machine()
        let sink = RecordingSink()
        try machine.queue(sink.request(.update))
        let tooMany = APNSResponse.rejected(429, "TooManyRequests")
        var request = try machine.written()
        var ceilings: [Duration] = []
        var decision = machine.answered(request, response: tooMany, tokenGeneration: 1)
        while let timer = decision.retryTimer {
            let ceiling = Self.policy.ceilingDelay(beforeRetry: request.attempt)
            #expect(timer.delay <= ceiling)
            ceilings.append(ceiling)
            machine.retryTimerFired(timer.id)
            request = try machine.written()
            decision = machine.answered(request, response: tooMany, tokenGeneration: 1)
        }
        #expect(ceilings == [.seconds(1), .seconds(2)])
        #expect(decision.completion?.result.failure == .rejected(APNSRejection(status: 429, reason: .tooManyRequests)))
        #expect(machine.outstanding == 0)
    }

    @Test("an expired provider token is renewed once; a second expiry for the same request is final")
    func expiredTokenRenewedOnce() throws {
        var machine = Self.machine()
        let sink = RecordingSink()
        try machine.queue(sink.request(.update))
        let request = try machine.written()
        let expired = APNSResponse.rejected(403, "ExpiredProviderToken")
        let first = machine.answered(request, response: expired, tokenGeneration: 7)
        guard case .renewTokenAndRetry(let generation) = first else {
            Issue.record("the first expiry must renew the token")
            return
        }
        #expect(generation == 7)
        machine.retryWithRenewedToken(request)
        let again = try machine.written()
        #expect(again.renewedToken)
        let second = machine.answered(again, response: expired, tokenGeneration: 8)
        let rejection = APNSRejection(status: 403, reason: .expiredProviderToken)
        #expect(second.completion?.result.failure == .rejected(rejection))
    }

    @Test("a failed open backs off with growing delays, and after the limit the waiting requests fail")
    func failedOpensBackOffThenGiveUp() throws {
        var machine = Self.machine()
        let sink = RecordingSink()
        try machine.queue(sink.request(.update, tag: 1))
        try machine.queue(sink.request(.update, tag: 2))
        for failure in 1..<Self.policy.maximumConnectAttempts {
            let action = machine.connectAttemptFailed(description: "refused", batchesWaiting: false)
            guard case .scheduleReconnect(let delay) = action else {
                Issue.record("failure \(failure) must back off, got \(action)")
                return
            }
            #expect(delay <= Self.policy.ceilingDelay(beforeRetry: failure))
            #expect(machine.connectionsToOpen(live: 0, anyTokenAccepted: true) == 0, "nothing opens while it waits")
            machine.reconnectTimerFired()
            #expect(machine.connectionsToOpen(live: 0, anyTokenAccepted: true) == 1, "one at a time after a failure")
        }
        let last = machine.connectAttemptFailed(description: "refused", batchesWaiting: false)
        #expect(last == .giveUp(.connectionFailed("refused")))
        let failed = machine.failQueued(.connectionFailed("refused"))
        #expect(failed.map(\.request.tag) == [1, 2])
        #expect(machine.outstanding == 0)
        #expect(machine.consecutiveConnectFailures == 0, "the next request starts counting again")
    }

    @Test("a connection that becomes ready ends the back-off's count; one closed before it counts as a failed open")
    func readyResetsFailures() throws {
        var machine = Self.machine()
        let sink = RecordingSink()
        try machine.queue(sink.request(.update))
        _ = machine.connectAttemptFailed(description: "refused", batchesWaiting: false)
        machine.reconnectTimerFired()
        machine.connectionBecameReady()
        #expect(machine.consecutiveConnectFailures == 0)
        let readyClosed = machine.connectionClosed(wasReady: true, description: "closed", batchesWaiting: false)
        #expect(readyClosed == .none)
        let handshakeLost = machine.connectionClosed(wasReady: false, description: "closed", batchesWaiting: false)
        #expect(machine.consecutiveConnectFailures == 1)
        if case .scheduleReconnect = handshakeLost {} else { Issue.record("expected a back-off, got \(handshakeLost)") }
    }

    @Test("a failed open with nothing waiting schedules no reconnect")
    func noReconnectWithoutWork() {
        var machine = Self.machine()
        let idle = machine.connectAttemptFailed(description: "refused", batchesWaiting: false)
        #expect(idle == .none)
        if case .scheduleReconnect = machine.connectAttemptFailed(description: "refused", batchesWaiting: true) {
        } else {
            Issue.record("a batch with requests to give must get its reconnect")
        }
    }

    @Test("a cancelled caller's queued request ends cancelled instead of being written")
    func cancelledDropped() throws {
        var machine = Self.machine()
        let sink = RecordingSink()
        try machine.queue(sink.request(.update))
        sink.isCancelled = true
        guard case .drop(let completion) = machine.nextWrite() else {
            Issue.record("a cancelled request must not be written")
            return
        }
        #expect(completion.result.failure == .cancelled)
        #expect(machine.outstanding == 0)
    }

    @Test("shutting down ends what waits (queued and backing off) and refuses what comes after")
    func shutdownDrains() throws {
        var machine = Self.machine()
        let sink = RecordingSink()
        try machine.queue(sink.request(.update, tag: 1))
        try machine.queue(sink.request(.update, tag: 2))
        try machine.queue(sink.request(.update, tag: 3))
        let backingOff = try machine.written()
        let answer = machine.answered(backingOff, response: .rejected(500, "InternalServerError"), tokenGeneration: 1)
        let timer = try #require(answer.retryTimer)
        let inFlight = try machine.written()
        _ = machine.connectAttemptFailed(description: "refused", batchesWaiting: false)

        let shutDown = machine.shutDown()
        #expect(shutDown.cancelReconnect)
        #expect(shutDown.retryTimerIDs == [timer.id])
        #expect(Set(shutDown.completions.map(\.request.tag)) == [1, 3])
        #expect(shutDown.completions.allSatisfy { $0.result.failure == .clientShutDown })
        // The one in flight comes back unprocessed when its connection closes: it ends too.
        let closed = machine.requeueUnprocessed([inFlight])
        #expect(closed.map(\.result.failure) == [.clientShutDown])
        #expect(machine.outstanding == 0)
        let refused = machine.submit(try sink.request(.update, tag: 4))
        #expect(refused?.result.failure == .clientShutDown)
        #expect(machine.outstanding == 0, "a refused request never counted")
        let lateClose = machine.connectionClosed(wasReady: false, description: "closed", batchesWaiting: true)
        #expect(lateClose == .none, "no reconnect after shutdown")
    }

    @Test("the gauges move by what changed since the last report")
    func gaugeChanges() {
        var machine = Self.machine()
        let opened = machine.gaugeChanges(open: 2, streams: 10)
        #expect(opened.connections == 2 && opened.streams == 10)
        let answered = machine.gaugeChanges(open: 2, streams: 4)
        #expect(answered.connections == 0 && answered.streams == -6)
        let closed = machine.gaugeChanges(open: 0, streams: 0)
        #expect(closed.connections == -2 && closed.streams == -4)
    }
}
