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

    private var queue = Deque<APNSQueuedRequest>()
    private var connections: [APNSConnectionHandler] = []
    private var nextConnectionID = 1
    private var consecutiveConnectFailures = 0
    private var reconnect: Scheduled<Void>?
    private var sources = Deque<any APNSRequestSource>()
    /// Requests admitted and not yet answered: queued, in flight or waiting to retry.
    private(set) var outstanding = 0
    private var dirtySinks: [ObjectIdentifier: any APNSResponseSink] = [:]
    /// The sink marked dirty last: a batch's completions come in runs, so most marks are repeats.
    private var lastDirtySink: (any APNSResponseSink)?
    private(set) var isShutDown = false
    /// Requests waiting out a back-off, with their timers, so that shutdown can answer them.
    private var retryTimers: [Int: (timer: Scheduled<Void>, request: APNSQueuedRequest)] = [:]
    private var nextRetryTimerID = 0
    /// What this pool last added to the shared connection and stream gauges.
    private var reportedConnections = 0
    private var reportedStreams = 0

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
        guard !isShutDown else {
            if let kind = request.operation.pushKind { metrics.recordOutcome(kind, .failure(.clientShutDown)) }
            request.sink.requestCompleted(tag: request.tag, operation: request.operation, result: .failure(.clientShutDown))
            request.sink.flushOutcomes()
            return
        }
        outstanding += 1
        queue.append(request)
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

    /// Takes requests from the batches only as far as free streams can carry them now (one when
    /// there is none, so that a connection opens): a request taken is a push the batch handed over,
    /// and what waits unwritten in the pool when the process dies is as uncertain to a fan-out as
    /// what was in flight. What waits stays in its batch instead, never handed out.
    private func pullFromSources() {
        var room = connections.reduce(0) { $0 + $1.availableStreams } - queue.count
        if room <= 0 && queue.isEmpty { room = 1 }
        while room > 0, outstanding < configuration.maximumOutstandingRequests, let source = sources.first {
            switch source.nextRequest() {
            case .request(let request):
                outstanding += 1
                room -= 1
                queue.append(request)
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
        while !queue.isEmpty {
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
            while connection.availableStreams > 0, let request = queue.popFirst() {
                if request.sink.isCancelled {
                    finish(request, result: .failure(.cancelled))
                    continue
                }
                connection.write(request, authorization: authorization, now: now, sentAt: sentAt)
            }
            connection.flush()
            metrics.recordConnectionLoad(inFlight: connection.inFlightCount, limit: connection.concurrencyLimit)
            if queue.isEmpty { pullFromSources() }
        }
        if !queue.isEmpty { openConnectionsIfNeeded() }
        flushSinks()
    }

    private func openConnectionsIfNeeded() {
        guard reconnect == nil else { return }
        let live = connections.filter { $0.state == .connecting || $0.state == .ready }
        // While a connection is still on its first stream (token not yet accepted), opening more would
        // only multiply handshakes; more come once the first is known to work.
        let wanted = consecutiveConnectFailures > 0 || !connections.contains(where: \.tokenAccepted) ? 1 : configuration.connectionsPerEndpoint
        if live.count < wanted {
            for _ in live.count..<wanted { connect() }
        }
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
            connectAttemptFailed(reason: "\(error)")
        }
    }

    private func connectAttemptFailed(reason: String) {
        consecutiveConnectFailures += 1
        if consecutiveConnectFailures >= retryPolicy.maximumConnectAttempts {
            consecutiveConnectFailures = 0
            failAllQueued(.connectionFailed("no connection to \(endpoint.host):\(endpoint.port): \(reason)"))
            return
        }
        guard !queue.isEmpty || !sources.isEmpty, reconnect == nil, !isShutDown else { return }
        let delay = retryPolicy.delay(beforeRetry: consecutiveConnectFailures)
        reconnect = eventLoop.scheduleTask(in: .nanoseconds(delay.wholeNanoseconds)) { [self] in
            reconnect = nil
            dispatch()
        }
    }

    // MARK: Connection events (APNSConnectionDelegate)

    func connectionBecameReady(_ connection: APNSConnectionHandler) {
        consecutiveConnectFailures = 0
        logger.debug("APNs connection ready", metadata: ["apns.connection": "\(connection.connectionID)"])
        dispatch()
    }

    func connectionStartedDraining(_ connection: APNSConnectionHandler) {
        // Its replacement is opened by the next dispatch if requests are waiting.
        if !queue.isEmpty { eventLoop.execute { [self] in dispatch() } }
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
        if !wasReady && !isShutDown {
            connectAttemptFailed(reason: "the connection closed during the handshake")
        }
        requeueUnprocessed(unprocessed)
        for request in uncertain {
            requestLeftUncertain(request, reason: reason)
        }
        dispatch()
        // Dispatch delivers nothing once the pool is shut down; the outcomes of this close must
        // still reach their callers.
        flushSinks()
    }

    func connection(_ connection: APNSConnectionHandler, didNotProcess requests: [APNSQueuedRequest]) {
        requeueUnprocessed(requests)
    }

    func connection(_ connection: APNSConnectionHandler, leftUncertain request: APNSQueuedRequest, reason: String) {
        requestLeftUncertain(request, reason: reason)
    }

    func connection(
        _ connection: APNSConnectionHandler,
        answered request: APNSQueuedRequest,
        response: APNSResponse,
        tokenGeneration: Int
    ) {
        if response.isSuccess {
            finish(request, result: .success(response))
            return
        }
        let rejection = response.rejection
        switch rejection.failureClass {
        case .renewTokenAndRetry where !request.renewedToken:
            logger.debug("APNs called the provider token expired; renewing it once", metadata: ["apns.token_generation": "\(tokenGeneration)"])
            do {
                try tokenCache.renew(rejectedGeneration: tokenGeneration)
            } catch {
                finish(request, result: .failure(error))
                return
            }
            connection.tokenWasRejected(generation: tokenGeneration)
            var retry = request
            retry.renewedToken = true
            queue.prepend(retry)
        case .retryLater:
            retryLater(request, error: .rejected(rejection))
        // Spelled out rather than `default` so that a new class has to be placed here on purpose:
        // everything else is final, the second ExpiredProviderToken of a request included.
        // (`uncertain` is never an answer's class.)
        case .renewTokenAndRetry, .tokenDead, .channelGone, .appMisconfigured, .requestRejected, .uncertain:
            finish(request, result: .failure(.rejected(rejection)))
        }
    }

    // MARK: Outcomes

    /// Requests APNs provably did not process (never written, above a GOAWAY's last-stream-id, or
    /// refused): back to the front of the queue, in their order, without counting an attempt.
    private func requeueUnprocessed(_ requests: [APNSQueuedRequest]) {
        guard !isShutDown else {
            for request in requests { finish(request, result: .failure(.clientShutDown)) }
            return
        }
        for request in requests.reversed() { queue.prepend(request) }
    }

    /// The one decision about a request that was written and never answered: APNs may have
    /// delivered it. What a device would show twice (a start) and what APNs would do twice (a
    /// channel creation) ends here as `uncertain`; the rest is retried like a transient failure.
    private func requestLeftUncertain(_ request: APNSQueuedRequest, reason: String) {
        var request = request
        if request.uncertainty == nil { request.uncertainty = reason }
        if request.operation.mayResendWhenUncertain {
            retryLater(request, error: .uncertain(reason))
        } else {
            finish(request, result: .failure(.uncertain(reason)))
        }
    }

    private func retryLater(_ request: APNSQueuedRequest, error: APNSError) {
        guard request.attempt < retryPolicy.maximumAttempts, !isShutDown, !request.sink.isCancelled else {
            finish(request, result: .failure(isShutDown ? .clientShutDown : error))
            return
        }
        var retry = request
        let delay = retryPolicy.delay(beforeRetry: retry.attempt)
        retry.attempt += 1
        let timerID = nextRetryTimerID
        nextRetryTimerID += 1
        let loopBoundRetry = NIOLoopBound(retry, eventLoop: eventLoop)
        let timer = eventLoop.scheduleTask(in: .nanoseconds(delay.wholeNanoseconds)) { [self] in
            retryTimers.removeValue(forKey: timerID)
            queue.append(loopBoundRetry.value)
            dispatch()
        }
        retryTimers[timerID] = (timer, retry)
    }

    private func finish(_ request: APNSQueuedRequest, result: Result<APNSResponse, APNSError>) {
        var result = result
        // A request that may already have been delivered by an earlier attempt never ends as "not
        // sent": when the later attempts failed without a verdict, it ends uncertain.
        if let reason = request.uncertainty, case .failure(let error) = result, Self.isInconclusive(error) {
            result = .failure(.uncertain(reason))
        }
        outstanding -= 1
        if let kind = request.operation.pushKind { metrics.recordOutcome(kind, result) }
        request.sink.requestCompleted(tag: request.tag, operation: request.operation, result: result)
        if lastDirtySink !== request.sink {
            dirtySinks[ObjectIdentifier(request.sink)] = request.sink
            lastDirtySink = request.sink
        }
    }

    /// Failures that say nothing about whether an earlier attempt reached APNs.
    private static func isInconclusive(_ error: APNSError) -> Bool {
        switch error {
        case .connectionFailed, .clientShutDown, .uncertain: true
        case .rejected(let rejection): rejection.failureClass == .retryLater || rejection.failureClass == .renewTokenAndRetry
        case .payloadTooLarge, .invalidRequest, .invalidResponse, .tokenSigningFailed, .cancelled, .invalidConfiguration: false
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
        while let request = queue.popFirst() {
            finish(request, result: .failure(error))
        }
        while let source = sources.popFirst() {
            source.fail(with: error)
        }
        flushSinks()
    }

    /// Fails what waits, closes every connection and resolves when they are closed.
    func shutdown() -> EventLoopFuture<Void> {
        eventLoop.flatSubmit { [self] in
            isShutDown = true
            reconnect?.cancel()
            reconnect = nil
            for (timer, request) in retryTimers.values {
                timer.cancel()
                finish(request, result: .failure(.clientShutDown))
            }
            retryTimers.removeAll()
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
        if open != reportedConnections {
            metrics.connections.increment(by: Double(open - reportedConnections))
            reportedConnections = open
        }
        if streams != reportedStreams {
            metrics.streamsInFlight.increment(by: Double(streams - reportedStreams))
            reportedStreams = streams
        }
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

