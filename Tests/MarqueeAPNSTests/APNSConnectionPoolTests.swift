import CoreMetrics
import Crypto
import Foundation
import Logging
import MarqueeCore
import NIOCore
import NIOEmbedded
import Testing

@testable import MarqueeAPNS

/// The pool carrying out its machine's decisions with stand-in connections (`APNSPoolConnection`)
/// on an embedded event loop: no socket, no TLS, no timer that runs by itself.
@Suite("Connection pool with stand-in connections")
struct APNSConnectionPoolTests {
    /// A connection that writes nowhere: the test plays the server by calling the pool's delegate.
    final class StandInConnection: APNSPoolConnection {
        let connectionID: Int
        var state = APNSConnectionStateMachine<APNSQueuedRequest>.State.connecting
        var becameReady = false
        var tokenAccepted = false
        var streamLimit = 1
        /// Written and not yet answered, in order.
        var inFlight: [APNSQueuedRequest] = []

        init(connectionID: Int) {
            self.connectionID = connectionID
        }

        var inFlightCount: Int { inFlight.count }
        var concurrencyLimit: Int { streamLimit }
        var effectiveStreamLimit: Int { streamLimit }
        var availableStreams: Int { state == .ready ? max(0, streamLimit - inFlight.count) : 0 }

        func authorizationForWrites(now: Date) throws(APNSError) -> String? { "bearer stand-in" }
        func tokenWasRejected(generation: Int) {}
        func write(_ request: APNSQueuedRequest, authorization: String, now: Date, sentAt: NIODeadline) {
            inFlight.append(request)
        }
        func flush() {}
        func closeForShutdown(promise: EventLoopPromise<Void>) {
            state = .closed
            promise.succeed()
        }

        /// The server's SETTINGS arrived.
        func becomeReady() {
            state = .ready
            becameReady = true
        }
    }

    final class StandInFactory: APNSPoolConnectionFactory {
        private(set) var opened: [StandInConnection] = []

        func makeConnection(
            connectionID: Int,
            on eventLoop: any EventLoop,
            delegate: any APNSConnectionDelegate
        ) -> (connection: any APNSPoolConnection, connected: EventLoopFuture<Void>) {
            let connection = StandInConnection(connectionID: connectionID)
            opened.append(connection)
            return (connection, eventLoop.makeSucceededVoidFuture())
        }
    }

    static func pool(on loop: EmbeddedEventLoop, factory: StandInFactory) -> APNSConnectionPool {
        let clock = ManualWallClock()
        let key = APNSSigningKey(privateKey: P256.Signing.PrivateKey(), keyID: "ABC123DEFG", teamID: "DEF123GHIJ")
        return APNSConnectionPool(
            eventLoop: loop,
            endpoint: APNSEndpoint(host: "api.push.apple.invalid", port: 443),
            configuration: APNSClientConfiguration.Transport(),
            dependencies: APNSPoolDependencies(
                retryPolicy: APNSPoolStateMachineTests.policy,
                tokenCache: APNSProviderTokenCache(signingKey: key, clock: clock),
                clock: clock,
                metrics: APNSClientMetrics(factory: NOOPMetricsHandler.instance, environment: .sandbox),
                logger: Logger(label: "test")
            ),
            connectionFactory: factory
        )
    }

    /// A pool on an embedded loop, its stand-in factory and a caller.
    struct Harness {
        let loop = EmbeddedEventLoop()
        let factory = StandInFactory()
        let sink = RecordingSink()
        let pool: APNSConnectionPool

        init() {
            pool = APNSConnectionPoolTests.pool(on: loop, factory: factory)
        }

        /// The server's SETTINGS arrived on `connection`.
        func ready(_ connection: StandInConnection) {
            connection.becomeReady()
            pool.connectionBecameReady(connection)
        }
    }

    @Test("a request opens a connection, is written once it is ready, and its answer reaches the caller")
    func requestOpensWritesAndCompletes() throws {
        let harness = Harness()
        let (pool, factory, sink) = (harness.pool, harness.factory, harness.sink)
        pool.submit(try sink.request(.update, tag: 1))
        #expect(factory.opened.count == 1)
        let connection = try #require(factory.opened.first)
        #expect(connection.inFlight.isEmpty, "nothing is written before the handshake")

        harness.ready(connection)
        #expect(connection.inFlight.map(\.tag) == [1])

        let request = connection.inFlight.removeFirst()
        pool.connection(connection, answered: request, response: .status(200), tokenGeneration: 1)
        pool.connectionReadCycleEnded(connection)
        #expect(sink.delivered.map(\.tag) == [1])
        #expect((try? sink.delivered.first?.result.get())?.status == 200)
        #expect(pool.outstanding == 0)
    }

    @Test("what a draining connection did not process goes out on a new connection; shutdown ends what is in flight")
    func unprocessedMovesToAnotherConnection() throws {
        let harness = Harness()
        let (pool, factory, sink) = (harness.pool, harness.factory, harness.sink)
        pool.submit(try sink.request(.start, tag: 7))
        let first = try #require(factory.opened.first)
        harness.ready(first)
        #expect(first.inFlight.map(\.tag) == [7])

        // A GOAWAY below its stream: the start was never processed.
        first.state = .draining
        pool.connectionStartedDraining(first)
        pool.connection(first, didNotProcess: [first.inFlight.removeFirst()])
        pool.connectionReadCycleEnded(first)
        #expect(factory.opened.count == 2, "a draining connection is not live: another opens")
        let second = factory.opened[1]
        harness.ready(second)
        #expect(second.inFlight.map(\.tag) == [7])
        #expect(second.inFlight.first?.attempt == 1, "unprocessed costs no attempt")
        #expect(sink.delivered.isEmpty)

        let shutDown = pool.shutdown()
        harness.loop.run()
        var closed = false
        shutDown.whenSuccess { closed = true }
        #expect(closed)
        // The start was written on a connection that closes with it in flight: uncertain, not sent again.
        let start = second.inFlight.removeFirst()
        pool.connectionClosed(second, wasReady: true, unprocessed: [], uncertain: [start], reason: "client shutdown")
        #expect(sink.delivered.map(\.tag) == [7])
        #expect(sink.delivered.first?.result.failure == .uncertain("client shutdown"))
        #expect(pool.outstanding == 0)
    }
}
