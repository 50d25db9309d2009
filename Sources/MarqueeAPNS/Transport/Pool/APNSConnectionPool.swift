import CoreMetrics
import DequeModule
import Foundation
import Logging
import MarqueeCore
import NIOCore

/// The connections to one endpoint for one signing key, with the queue of requests in front of them.
///
/// Everything here lives on one event loop: the queue, the connections' stream tables and the
/// completion bookkeeping. No lock and no task per request; callers reach it through
/// `eventLoop.execute`. Requests go to the connection with the most free streams, in batches, with
/// one flush per connection per batch. A connection's free streams stop at its concurrency limit
/// (`APNSConcurrencyLimit`, unless the transport asks for the fixed window): the pool takes work
/// from the batches only as far as those carry it.
///
/// Connections (`APNSPoolConnection`, opened by its `APNSPoolConnectionFactory`) report each
/// request that left them by its fate (`APNSConnectionDelegate`); what happens next (complete,
/// retry after a back-off, send again elsewhere, end uncertain) is `APNSPoolStateMachine`'s
/// decision, as is when to open connections and when to give up. The pool carries those out.
final class APNSConnectionPool: APNSConnectionDelegate, @unchecked Sendable {
    // @unchecked: all mutable state below is touched only on `eventLoop` (every entry point hops
    // there or asserts it); the `let`s are Sendable.

    let eventLoop: any EventLoop
    let endpoint: APNSEndpoint
    let configuration: APNSClientConfiguration.Transport
    let retryPolicy: APNSRetryPolicy
    let tokenCache: APNSProviderTokenCache
    let clock: any WallClock
    let logger: Logger
    let metrics: APNSClientMetrics
    private let connectionFactory: any APNSPoolConnectionFactory

    // Not `private`: the extensions in `+ConnectionEvents` and `+Outcomes` read and move these too.
    var machine: APNSPoolStateMachine
    var connections: [any APNSPoolConnection] = []
    private var nextConnectionID = 1
    var reconnect: Scheduled<Void>?
    var sources = Deque<any APNSRequestSource>()
    var dirtySinks: [ObjectIdentifier: any APNSResponseSink] = [:]
    /// The sink marked dirty last: a batch's completions come in runs, so most marks are repeats.
    var lastDirtySink: (any APNSResponseSink)?
    /// The timers of the requests waiting out a back-off (the requests are the machine's).
    var retryTimers: [Int: Scheduled<Void>] = [:]

    /// Requests admitted and not yet answered: queued, in flight or waiting to retry.
    var outstanding: Int { machine.outstanding }
    var isShutDown: Bool { machine.isShutDown }

    /// A pool over TCP (`APNSConnectionFactory`).
    convenience init(
        eventLoop: any EventLoop,
        endpoint: APNSEndpoint,
        configuration: APNSClientConfiguration.Transport,
        dependencies: APNSPoolDependencies
    ) throws(APNSError) {
        let factory = try APNSConnectionFactory(
            endpoint: endpoint,
            configuration: configuration,
            tokenCache: dependencies.tokenCache,
            metrics: dependencies.metrics,
            logger: Self.logger(dependencies.logger, for: endpoint)
        )
        self.init(
            eventLoop: eventLoop,
            endpoint: endpoint,
            configuration: configuration,
            dependencies: dependencies,
            connectionFactory: factory
        )
    }

    init(
        eventLoop: any EventLoop,
        endpoint: APNSEndpoint,
        configuration: APNSClientConfiguration.Transport,
        dependencies: APNSPoolDependencies,
        connectionFactory: any APNSPoolConnectionFactory
    ) {
        self.eventLoop = eventLoop
        self.endpoint = endpoint
        self.configuration = configuration
        retryPolicy = dependencies.retryPolicy
        tokenCache = dependencies.tokenCache
        clock = dependencies.clock
        metrics = dependencies.metrics
        logger = Self.logger(dependencies.logger, for: endpoint)
        self.connectionFactory = connectionFactory
        machine = APNSPoolStateMachine(
            settings: .init(
                maximumOutstandingRequests: configuration.maximumOutstandingRequests,
                connectionsPerEndpoint: configuration.connectionsPerEndpoint,
                retryPolicy: dependencies.retryPolicy
            )
        )
    }

    private static func logger(_ logger: Logger, for endpoint: APNSEndpoint) -> Logger {
        var logger = logger
        logger[metadataKey: "apns.endpoint"] = "\(endpoint.host):\(endpoint.port)"
        return logger
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
            let chosen = round.choose(from: connections, availableStreams: writableStreams, identity: Self.identity)
            guard let connection = chosen else { break }
            let authorization: String?
            do throws(APNSError) {
                authorization = try connection.authorizationForWrites(now: now)
            } catch {
                failAllQueued(error)
                return
            }
            guard let authorization else {
                // It retired itself. Never ask it again in this pass, whatever it reports.
                round.decline(Self.identity(connection))
                continue
            }
            while connection.availableStreams > 0, let next = machine.nextWrite() {
                switch next {
                case .write(let request):
                    connection.write(request, authorization: authorization, now: now, sentAt: sentAt)
                case .drop(let completion):
                    deliver(completion)
                }
            }
            connection.flush()
            metrics.recordConnectionLoad(inFlight: connection.inFlightCount, limit: connection.concurrencyLimit)
            if !machine.hasQueuedRequests { pullFromSources() }
        }
        openConnectionsIfNeeded()
        flushSinks()
    }

    /// What `dispatch` writes on a connection now (`APNSDispatchRound.writableStreams`).
    private func writableStreams(_ connection: any APNSPoolConnection) -> Int {
        APNSDispatchRound.writableStreams(
            available: connection.availableStreams,
            inFlight: connection.inFlightCount,
            limit: connection.concurrencyLimit,
            minimumBatch: configuration.minimumWriteBatch
        )
    }

    private func openConnectionsIfNeeded() {
        let live = connections.count(where: { $0.state == .connecting || $0.state == .ready })
        let anyTokenAccepted = connections.contains(where: \.tokenAccepted)
        let count = machine.connectionsToOpen(live: live, anyTokenAccepted: anyTokenAccepted)
        for _ in 0..<count { connect() }
    }

    private func connect() {
        let (connection, connected) = connectionFactory.makeConnection(
            connectionID: nextConnectionID,
            on: eventLoop,
            delegate: self
        )
        nextConnectionID += 1
        connections.append(connection)
        let loopBoundConnection = NIOLoopBound(connection, eventLoop: eventLoop)
        connected.whenFailure { [self] error in
            logger.debug("APNs connection attempt failed", metadata: ["error": "\(error)"])
            connections.removeAll { $0 === loopBoundConnection.value }
            let description = unreachable("\(error)")
            carryOut(machine.connectAttemptFailed(description: description, batchesWaiting: !sources.isEmpty))
        }
    }

    private static func identity(_ connection: any APNSPoolConnection) -> ObjectIdentifier {
        ObjectIdentifier(connection)
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
}
