import CoreMetrics
import DequeModule
import Foundation
import Logging
import MarqueeCore
import NIOCore
import NIOHTTP2
import NIOPosix
import NIOSSL

/// The connections to one endpoint for one signing key, with the queue of requests in front of them.
///
/// Everything here lives on one event loop: the queue, the connections' stream tables and the
/// completion bookkeeping. No lock and no task per request; callers reach it through
/// `eventLoop.execute`. Requests go to the connection with the most free streams, in batches, with
/// one flush per connection per batch. A connection's free streams stop at its concurrency limit
/// (`APNSConcurrencyLimit`, unless the transport asks for the fixed window): the pool takes work
/// from the batches only as far as those carry it.
///
/// Connections report each request that left them by its fate (`APNSConnectionDelegate`); what
/// happens next is decided here, in one place: answered requests complete or are retried by their
/// APNs reason, unprocessed ones go to the front of the queue without counting an attempt, and
/// uncertain ones (written, never answered) are retried only if sending them twice is harmless
/// (`APNSOperation.mayResendWhenUncertain`): never a start or a channel creation.
final class APNSConnectionPool: APNSConnectionDelegate, @unchecked Sendable {
    // @unchecked: all mutable state below is touched only on `eventLoop` (every entry point hops
    // there or asserts it); the `let`s are Sendable.

    let eventLoop: any EventLoop
    let endpoint: APNSEndpoint
    /// `:scheme` and `:authority`, computed once rather than per request.
    let scheme: String
    let authority: String
    let configuration: APNSClientConfiguration.Transport
    let retryPolicy: APNSRetryPolicy
    let tokenCache: APNSProviderTokenCache
    let clock: any WallClock
    let logger: Logger
    let metrics: APNSClientMetrics
    private let sslContext: NIOSSLContext?

    private var machine: APNSPoolStateMachine
    private var connections: [APNSConnectionHandler] = []
    private var nextConnectionID = 1
    private var reconnect: Scheduled<Void>?
    private var sources = Deque<any APNSRequestSource>()
    private var dirtySinks: [ObjectIdentifier: any APNSResponseSink] = [:]
    /// The sink marked dirty last: a batch's completions come in runs, so most marks are repeats.
    private var lastDirtySink: (any APNSResponseSink)?
    /// The timers of the requests waiting out a back-off (the requests are the machine's).
    private var retryTimers: [Int: Scheduled<Void>] = [:]

    /// Requests admitted and not yet answered: queued, in flight or waiting to retry.
    var outstanding: Int { machine.outstanding }
    var isShutDown: Bool { machine.isShutDown }

    init(
        eventLoop: any EventLoop,
        endpoint: APNSEndpoint,
        configuration: APNSClientConfiguration.Transport,
        retryPolicy: APNSRetryPolicy,
        tokenCache: APNSProviderTokenCache,
        clock: any WallClock,
        metrics: APNSClientMetrics,
        logger: Logger
    ) throws(APNSError) {
        self.eventLoop = eventLoop
        self.metrics = metrics
        self.endpoint = endpoint
        self.scheme = endpoint.scheme
        self.authority = endpoint.authority
        self.configuration = configuration
        self.retryPolicy = retryPolicy
        self.tokenCache = tokenCache
        self.clock = clock
        machine = APNSPoolStateMachine(
            settings: .init(
                maximumOutstandingRequests: configuration.maximumOutstandingRequests,
                connectionsPerEndpoint: configuration.connectionsPerEndpoint,
                retryPolicy: retryPolicy
            )
        )
        var logger = logger
        logger[metadataKey: "apns.endpoint"] = "\(endpoint.host):\(endpoint.port)"
        self.logger = logger
        switch endpoint.security {
        case .cleartext:
            sslContext = nil
        case .tls(let trustRoots):
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.applicationProtocols = ["h2"]
            tls.minimumTLSVersion = .tlsv12
            do {
                switch trustRoots {
                case .system: break
                case .pemFile(let path): tls.trustRoots = .file(path)
                case .pem(let pem): tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(pem.utf8)))
                }
                sslContext = try NIOSSLContext(configuration: tls)
            } catch {
                throw .invalidConfiguration("cannot set up TLS for \(endpoint.host): \(error)")
            }
        }
    }

    // MARK: Admission

    /// Queues one request (a single `send`); the caller's suspension is its back-pressure.
    func submit(_ request: APNSQueuedRequest) {
        eventLoop.assertInEventLoop()
        if let refused = machine.submit(request) {
            deliver(refused)
            flushSinks()
            return
        }
        dispatch()
    }

    /// Adds a batch that the pool pulls from while fewer than `maximumOutstandingRequests` are
    /// outstanding: a producer far ahead of APNs waits instead of filling memory.
    func addSource(_ source: any APNSRequestSource) {
        eventLoop.assertInEventLoop()
        guard !isShutDown else {
            source.poolShutDown()
            return
        }
        sources.append(source)
        dispatch()
    }

    /// Takes requests from the batches as far as the machine's room says (`pullRoom`).
    private func pullFromSources() {
        var room = machine.pullRoom(freeStreams: connections.reduce(0) { $0 + $1.availableStreams })
        while room > 0, let source = sources.first {
            switch source.nextRequest() {
            case .request(let request):
                machine.pulled(request)
                room -= 1
            case .paused:
                // Keep it for later; try the next one.
                sources.append(sources.removeFirst())
                if sources.allSatisfy({ $0.isPaused }) { return }
            case .exhausted:
                sources.removeFirst()
            }
        }
    }

    // MARK: Dispatch

    /// Moves queued requests onto free streams, one flush per connection, and opens connections while
    /// requests wait and the pool is below its size.
    func dispatch() {
        // Every change of connections and streams passes through here (writes, answers, closes).
        defer { reportTransportGauges() }
        guard !isShutDown else { return }
        pullFromSources()
        let now = clock.now
        // One clock read per dispatch for the latency of every request it writes.
        let sentAt = NIODeadline.now()
        var round = APNSDispatchRound()
        while machine.hasQueuedRequests {
            guard let connection = round.choose(from: connections) else { break }
            let authorization: String?
            do {
                authorization = try connection.authorizationForWrites(now: now)
            } catch {
                failAllQueued(error)
                return
            }
            guard let authorization else {
                // It retired itself. Never ask it again in this pass, whatever it reports.
                round.decline(connection)
                continue
            }
            while connection.availableStreams > 0, let next = machine.nextWrite() {
                switch next {
                case .write(let request): connection.write(request, authorization: authorization, now: now, sentAt: sentAt)
                case .drop(let completion): deliver(completion)
                }
            }
            connection.flush()
            metrics.recordConnectionLoad(inFlight: connection.inFlightCount, limit: connection.concurrencyLimit)
            if !machine.hasQueuedRequests { pullFromSources() }
        }
        openConnectionsIfNeeded()
        flushSinks()
    }

    private func openConnectionsIfNeeded() {
        let live = connections.count(where: { $0.state == .connecting || $0.state == .ready })
        let count = machine.connectionsToOpen(live: live, anyTokenAccepted: connections.contains(where: \.tokenAccepted))
        for _ in 0..<count { connect() }
    }

    private func connect() {
        let handler = APNSConnectionHandler(
            connectionID: nextConnectionID,
            transport: configuration,
            scheme: scheme,
            authority: authority,
            tokenCache: tokenCache,
            metrics: metrics,
            logger: logger,
            delegate: self
        )
        nextConnectionID += 1
        connections.append(handler)
        let sslContext = self.sslContext
        let endpoint = self.endpoint
        let serverHostname = Self.isIPAddress(endpoint.host) ? nil : endpoint.host
        let settings = [
            HTTP2Setting(parameter: .maxConcurrentStreams, value: 100),
            HTTP2Setting(parameter: .initialWindowSize, value: 1 << 20),
            HTTP2Setting(parameter: .maxHeaderListSize, value: 1 << 16),
            HTTP2Setting(parameter: .enablePush, value: 0),
        ]
        let loopBoundHandler = NIOLoopBound(handler, eventLoop: eventLoop)
        logger.debug("Connecting to APNs", metadata: ["apns.connection": "\(handler.connectionID)"])
        let connected = ClientBootstrap(group: eventLoop)
            .connectTimeout(configuration.connectTimeout)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    if let sslContext {
                        try sync.addHandler(NIOSSLClientHandler(context: sslContext, serverHostname: serverHostname))
                        // One TLS record per batch rather than per frame (see the handler).
                        try sync.addHandler(APNSWriteCoalescingHandler())
                    }
                    // HTTP/2 framing only: the connection handler's state machine keeps the streams
                    // (see the framer for why not NIOHTTP2Handler). Header blocks are built from
                    // values checked when each request was made (hex tokens, bundle IDs, UUIDs), so
                    // they are not checked again per frame.
                    try sync.addHandler(APNSHTTP2Framer(localSettings: settings, allocator: channel.allocator))
                    try sync.addHandler(loopBoundHandler.value)
                }
            }
            .connect(host: endpoint.host, port: endpoint.port)
        connected.whenFailure { [self] error in
            logger.debug("APNs connection attempt failed", metadata: ["error": "\(error)"])
            connections.removeAll { $0 === loopBoundHandler.value }
            carryOut(machine.connectAttemptFailed(description: unreachable("\(error)"), batchesWaiting: !sources.isEmpty))
        }
    }

    private func unreachable(_ reason: String) -> String {
        "no connection to \(endpoint.host):\(endpoint.port): \(reason)"
    }

    private func carryOut(_ action: APNSPoolStateMachine.ConnectFailureAction) {
        switch action {
        case .none:
            break
        case .scheduleReconnect(let delay):
            reconnect = eventLoop.scheduleTask(in: .nanoseconds(delay.wholeNanoseconds)) { [self] in
                reconnect = nil
                machine.reconnectTimerFired()
                dispatch()
            }
        case .giveUp(let error):
            failAllQueued(error)
        }
    }

    // MARK: Connection events (APNSConnectionDelegate)

    func connectionBecameReady(_ connection: APNSConnectionHandler) {
        machine.connectionBecameReady()
        logger.debug("APNs connection ready", metadata: ["apns.connection": "\(connection.connectionID)"])
        dispatch()
    }

    func connectionStartedDraining(_ connection: APNSConnectionHandler) {
        // Its replacement is opened by the next dispatch if requests are waiting.
        if machine.hasQueuedRequests { eventLoop.execute { [self] in dispatch() } }
    }

    func connectionReadCycleEnded(_ connection: APNSConnectionHandler) {
        // Send what freed streams allow and deliver outcomes.
        dispatch()
        flushSinks()
    }

    func connectionClosed(
        _ connection: APNSConnectionHandler,
        wasReady: Bool,
        unprocessed: [APNSQueuedRequest],
        uncertain: [APNSQueuedRequest],
        reason: String
    ) {
        connections.removeAll { $0 === connection }
        logger.debug(
            "APNs connection closed",
            metadata: [
                "apns.connection": "\(connection.connectionID)", "apns.unprocessed": "\(unprocessed.count)",
                "apns.uncertain": "\(uncertain.count)",
            ]
        )
        let description = unreachable("the connection closed during the handshake")
        carryOut(machine.connectionClosed(wasReady: wasReady, description: description, batchesWaiting: !sources.isEmpty))
        for completion in machine.requeueUnprocessed(unprocessed) { deliver(completion) }
        for request in uncertain {
            carryOut(machine.leftUncertain(request, reason: reason))
        }
        dispatch()
        // Dispatch delivers nothing once the pool is shut down; the outcomes of this close must
        // still reach their callers.
        flushSinks()
    }

    func connection(_ connection: APNSConnectionHandler, didNotProcess requests: [APNSQueuedRequest]) {
        for completion in machine.requeueUnprocessed(requests) { deliver(completion) }
    }

    func connection(_ connection: APNSConnectionHandler, leftUncertain request: APNSQueuedRequest, reason: String) {
        carryOut(machine.leftUncertain(request, reason: reason))
    }

    func connection(
        _ connection: APNSConnectionHandler,
        answered request: APNSQueuedRequest,
        response: APNSResponse,
        tokenGeneration: Int
    ) {
        let generation: Int
        switch machine.answered(request, response: response, tokenGeneration: tokenGeneration) {
        case .outcome(let outcome):
            carryOut(outcome)
            return
        case .renewTokenAndRetry(let rejectedGeneration):
            generation = rejectedGeneration
        }
        logger.debug(
            "APNs called the provider token expired; renewing it once",
            metadata: ["apns.token_generation": "\(generation)"]
        )
        do {
            try tokenCache.renew(rejectedGeneration: generation)
        } catch {
            deliver(machine.finish(request, result: .failure(error)))
            return
        }
        connection.tokenWasRejected(generation: generation)
        machine.retryWithRenewedToken(request)
    }

    // MARK: Outcomes

    private func carryOut(_ outcome: APNSPoolStateMachine.Outcome) {
        switch outcome {
        case .completed(let completion):
            deliver(completion)
        case .scheduleRetry(let timerID, let delay):
            retryTimers[timerID] = eventLoop.scheduleTask(in: .nanoseconds(delay.wholeNanoseconds)) { [self] in
                retryTimers.removeValue(forKey: timerID)
                machine.retryTimerFired(timerID)
                dispatch()
            }
        }
    }

    /// Hands an ended request to its sink, which delivers it at the next `flushSinks`.
    private func deliver(_ completion: APNSPoolStateMachine.Completion) {
        let request = completion.request
        if let kind = request.operation.pushKind { metrics.recordOutcome(kind, completion.result) }
        request.sink.requestCompleted(tag: request.tag, operation: request.operation, result: completion.result)
        if lastDirtySink !== request.sink {
            dirtySinks[ObjectIdentifier(request.sink)] = request.sink
            lastDirtySink = request.sink
        }
    }

    private func flushSinks() {
        guard !dirtySinks.isEmpty else { return }
        let sinks = dirtySinks
        dirtySinks.removeAll(keepingCapacity: true)
        lastDirtySink = nil
        for sink in sinks.values { sink.flushOutcomes() }
    }

    private func failAllQueued(_ error: APNSError) {
        for completion in machine.failQueued(error) { deliver(completion) }
        while let source = sources.popFirst() {
            source.fail(with: error)
        }
        flushSinks()
    }

    /// Fails what waits, closes every connection and resolves when they are closed.
    func shutdown() -> EventLoopFuture<Void> {
        eventLoop.flatSubmit { [self] in
            let shutDown = machine.shutDown()
            if shutDown.cancelReconnect { reconnect?.cancel() }
            reconnect = nil
            for timerID in shutDown.retryTimerIDs { retryTimers.removeValue(forKey: timerID)?.cancel() }
            for completion in shutDown.completions { deliver(completion) }
            failAllQueued(.clientShutDown)
            let closing = connections.map { connection in
                let promise = eventLoop.makePromise(of: Void.self)
                connection.closeForShutdown(promise: promise)
                return promise.futureResult
            }
            return EventLoopFuture.andAllComplete(closing, on: eventLoop)
        }
    }

    // MARK: Inspection (tests, metrics)

    /// Moves the shared gauges by what changed since the last report: handshaken connections not
    /// yet closed, and streams awaiting an answer. O(connections), once per dispatch, not per push.
    private func reportTransportGauges() {
        var open = 0
        var streams = 0
        for connection in connections {
            if connection.becameReady && connection.state != .closed { open += 1 }
            streams += connection.inFlightCount
        }
        let changes = machine.gaugeChanges(open: open, streams: streams)
        if changes.connections != 0 { metrics.connections.increment(by: Double(changes.connections)) }
        if changes.streams != 0 { metrics.streamsInFlight.increment(by: Double(changes.streams)) }
    }

    /// The stream limits of the live connections, for tests and metrics.
    var connectionStreamLimits: [Int] {
        connections.filter { $0.state == .ready }.map(\.effectiveStreamLimit)
    }

    var liveConnectionCount: Int { connections.count }

    private static func isIPAddress(_ host: String) -> Bool {
        (try? SocketAddress(ipAddress: host, port: 0)) != nil
    }
}
