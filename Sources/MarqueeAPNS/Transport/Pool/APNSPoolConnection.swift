import Foundation
import NIOCore

/// What `APNSConnectionPool` asks of one connection: its room, writing requests on new streams with
/// the current token, and closing. `APNSConnectionHandler` is the one over a socket; a test can
/// stand in for it, and the pool never learns which it holds. What a connection reports back goes
/// through `APNSConnectionDelegate`.
protocol APNSPoolConnection: APNSDispatchCandidate {
    var connectionID: Int { get }
    var state: APNSConnectionStateMachine<APNSQueuedRequest>.State { get }
    /// Whether the server ever completed the handshake.
    var becameReady: Bool { get }
    /// Whether APNs accepted a request with this connection's token (until then it has one stream).
    var tokenAccepted: Bool { get }
    var inFlightCount: Int { get }
    /// The most requests it takes in flight now: its concurrency limit within its stream budget.
    var concurrencyLimit: Int { get }
    /// Its stream budget: 1 until a token was accepted, then the server's (capped).
    var effectiveStreamLimit: Int { get }

    /// The `authorization` value for the next writes, or `nil` when it may not use the current
    /// token: then it has begun draining and reports no free streams.
    func authorizationForWrites(now: Date) throws(APNSError) -> String?
    /// APNs called its token `generation` expired.
    func tokenWasRejected(generation: Int)
    /// Writes one request on a new stream; `flush()` sends a batch of them.
    func write(_ request: APNSQueuedRequest, authorization: String, now: Date, sentAt: NIODeadline)
    func flush()
    /// Closes at once (client shutdown); what is in flight becomes uncertain.
    func closeForShutdown(promise: EventLoopPromise<Void>)
}

/// Opens the pool's connections.
protocol APNSPoolConnectionFactory {
    /// Starts opening connection `connectionID` on `eventLoop`, reporting to `delegate`. The
    /// connection is returned at once (it reports no free streams until it is ready); `connected`
    /// fails if no channel came up (then the connection never reports to its delegate).
    func makeConnection(
        connectionID: Int,
        on eventLoop: any EventLoop,
        delegate: any APNSConnectionDelegate
    ) -> (connection: any APNSPoolConnection, connected: EventLoopFuture<Void>)
}
