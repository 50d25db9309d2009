import Foundation
import Logging
import MarqueeCore
import NIOCore
import NIOHPACK
import NIOHTTP2

/// Speaks HTTP/2 frames for one connection, behind `NIOHTTP2Handler` without a stream multiplexer:
/// no child channel, pipeline or task per request. It allocates stream IDs itself, writes HEADERS
/// (+ DATA with END_STREAM) per request, keeps requests in flight in a table keyed by stream ID and
/// completes them from the response frames. The pool decides what to write; this handler reports
/// capacity, outcomes and the connection's fate back to it. Event-loop confined, like every handler.
final class APNSConnectionHandler: ChannelDuplexHandler, APNSDispatchCandidate {
    typealias InboundIn = HTTP2Frame
    typealias OutboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    enum State {
        /// TCP/TLS up or coming up; the server's first SETTINGS not seen yet.
        case connecting
        case ready
        /// GOAWAY received, token can no longer be used, or stream IDs ran out: finish what is in
        /// flight, open nothing new.
        case draining
        case closed
    }

    private struct InFlight {
        var request: APNSQueuedRequest
        var tokenGeneration: Int
        var response: APNSResponse?
        /// When it was written, for the latency metric.
        var sentAt: NIODeadline
    }

    let pool: APNSConnectionPool
    let connectionID: Int
    private(set) var state = State.connecting
    /// Whether the server ever completed the handshake; a connection that closes before is a failed
    /// connection attempt.
    private(set) var becameReady = false
    private var context: ChannelHandlerContext?
    private var nextStreamID: Int32 = 1
    private var inFlight: APNSStreamTable<InFlight>
    /// SETTINGS_MAX_CONCURRENT_STREAMS; HTTP/2 says unlimited until the server names a number.
    private var serverMaxConcurrentStreams = Int.max
    /// APNs allows one stream on a token connection until a request with a valid token was accepted.
    private(set) var tokenAccepted = false
    private var tokenState = APNSConnectionTokenState()
    private var unacknowledgedInboundBytes = 0
    private var lastReadAt = NIODeadline.now()
    private var pingOutstanding = false
    private var pingTask: RepeatedTask?

    init(pool: APNSConnectionPool, connectionID: Int) {
        self.pool = pool
        self.connectionID = connectionID
        self.inFlight = APNSStreamTable(minimumCapacity: 4 * pool.configuration.maximumStreamsPerConnection)
    }

    /// How many more streams the pool may open here now.
    var availableStreams: Int {
        guard state == .ready, context != nil, inFlight.canInsert(HTTP2StreamID(nextStreamID)) else {
            return 0
        }
        return max(0, effectiveStreamLimit - inFlight.count)
    }

    /// The stream limit in force: 1 until a token was accepted, then the server's.
    var effectiveStreamLimit: Int {
        tokenAccepted ? min(serverMaxConcurrentStreams, pool.configuration.maximumStreamsPerConnection) : 1
    }

    var inFlightCount: Int { inFlight.count }

    // MARK: Writing

    /// The `authorization` value for the next writes, or `nil` when this connection may not use the
    /// current token: then it has already begun draining, so it reports no free streams and dispatch
    /// cannot choose it again (see `APNSConnectionTokenState` for the rules).
    func authorizationForWrites(now: Date) throws(APNSError) -> String? {
        switch tokenState.decide(current: try pool.tokenCache.currentToken(), now: now) {
        case .write(let authorization):
            return authorization
        case .retire:
            beginDraining()
            return nil
        }
    }

    /// APNs called this connection's token `generation` expired.
    func tokenWasRejected(generation: Int) {
        tokenState.tokenWasRejected(generation: generation)
    }

    /// Writes one request on a new stream; `flush()` sends a batch of them.
    func write(_ request: APNSQueuedRequest, authorization: String, now: Date, sentAt: NIODeadline) {
        guard let context, let generation = tokenState.generation else {
            // Unreachable while `availableStreams` is checked first; never drop a request regardless.
            pool.requeueUnprocessed([request])
            return
        }
        let streamID = HTTP2StreamID(nextStreamID)
        nextStreamID += 2
        let body = request.operation.body
        let headers = request.operation.headers(
            scheme: pool.scheme,
            authority: pool.authority,
            authorization: authorization,
            now: now
        )
        inFlight.insert(InFlight(request: request, tokenGeneration: generation, response: nil, sentAt: sentAt), for: streamID)
        context.write(
            wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .headers(.init(headers: headers, endStream: body == nil)))),
            promise: nil
        )
        if let body {
            context.write(
                wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .data(.init(data: .byteBuffer(body), endStream: true)))),
                promise: nil
            )
        }
        // Client stream IDs are odd 31-bit numbers; a long-lived connection eventually runs out.
        if nextStreamID >= Int32.max - 2 { beginDraining() }
    }

    func flush() {
        context?.flush()
    }

    /// Stops new streams; closes once the streams in flight finish.
    func beginDraining() {
        guard state == .ready || state == .connecting else { return }
        state = .draining
        pool.connectionStartedDraining(self)
        closeIfDrained()
    }

    /// Closes at once (client shutdown); requests in flight fail with `clientShutDown`.
    func closeForShutdown(promise: EventLoopPromise<Void>) {
        guard let context, state != .closed else {
            promise.succeed()
            return
        }
        context.channel.closeFuture.cascade(to: promise)
        context.close(promise: nil)
    }

    private func closeIfDrained() {
        if state == .draining && inFlight.isEmpty { context?.close(promise: nil) }
    }

    // MARK: Channel events

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func channelActive(context: ChannelHandlerContext) {
        // A connection attempt that completes after shutdown has nobody to serve.
        if pool.isShutDown {
            context.close(promise: nil)
            return
        }
        lastReadAt = .now()
        let interval = pool.configuration.pingInterval
        let loopBoundSelf = NIOLoopBound(self, eventLoop: context.eventLoop)
        pingTask = context.eventLoop.scheduleRepeatedTask(initialDelay: interval, delay: interval) { _ in
            loopBoundSelf.value.pingIfIdle()
        }
        context.fireChannelActive()
    }

    /// HTTP/2 PING keep-alive: ping an idle connection; a ping unanswered for a whole interval means
    /// the connection is dead even if TCP has not noticed.
    private func pingIfIdle() {
        guard let context, state != .closed else { return }
        if pingOutstanding {
            pool.logger.debug("APNs connection did not answer a PING; closing it", metadata: ["apns.connection": "\(connectionID)"])
            context.close(promise: nil)
            return
        }
        guard NIODeadline.now() - lastReadAt >= pool.configuration.pingInterval else { return }
        pingOutstanding = true
        context.writeAndFlush(
            wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .ping(HTTP2PingData(withInteger: 0x4D61_7271), ack: false))),
            promise: nil
        )
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        lastReadAt = .now()
        switch frame.payload {
        case .headers(let headers):
            guard var entry = inFlight[frame.streamID] else { return }
            if entry.response == nil {
                let response = APNSResponse(headers: headers.headers)
                if (100..<200).contains(response.status) { return }
                entry.response = response
            }
            if headers.endStream {
                complete(frame.streamID, entry: entry)
            } else {
                inFlight[frame.streamID] = entry
            }
        case .data(let data):
            unacknowledgedInboundBytes += data.data.readableBytes
            guard var entry = inFlight[frame.streamID], case .byteBuffer(var chunk) = data.data else { return }
            if entry.response?.body == nil {
                entry.response?.body = chunk
            } else {
                entry.response?.body?.writeBuffer(&chunk)
            }
            if data.endStream {
                complete(frame.streamID, entry: entry)
            } else {
                inFlight[frame.streamID] = entry
            }
        case .settings(.settings(let settings)):
            for setting in settings where setting.parameter == .maxConcurrentStreams {
                serverMaxConcurrentStreams = setting.value
            }
            if state == .connecting {
                state = .ready
                becameReady = true
                pool.connectionBecameReady(self)
            }
        case .goAway(let lastStreamID, let errorCode, let opaqueData):
            receivedGoAway(lastStreamID: lastStreamID, errorCode: errorCode, debugData: opaqueData)
        case .rstStream(let errorCode):
            guard let entry = inFlight.remove(frame.streamID) else { return }
            if errorCode == .refusedStream {
                // RFC 9113: a refused stream was not processed, so it is safe to send again.
                pool.requeueUnprocessed([entry.request])
            } else {
                pool.requestFailed(entry.request, error: .connectionFailed("stream reset by the server (\(errorCode))"))
            }
            closeIfDrained()
        case .ping(_, ack: true):
            pingOutstanding = false
        default:
            break
        }
    }

    private func complete(_ streamID: HTTP2StreamID, entry: InFlight) {
        inFlight.remove(streamID)
        guard let response = entry.response else { return }
        if let kind = entry.request.operation.pushKind {
            // `lastReadAt` was read when this frame arrived: no second clock read per answer.
            pool.metrics.recordDuration(kind, nanoseconds: (lastReadAt - entry.sentAt).nanoseconds)
        }
        if !tokenAccepted && response.status != 403 {
            // Any answer other than an authentication failure means APNs took the token.
            tokenAccepted = true
        }
        pool.requestFinished(entry.request, response: response, tokenGeneration: entry.tokenGeneration, connection: self)
        closeIfDrained()
    }

    private func receivedGoAway(lastStreamID: HTTP2StreamID, errorCode: HTTP2ErrorCode, debugData: ByteBuffer?) {
        var reason = ""
        if let debugData, let object = try? JSONSerialization.jsonObject(with: Data(debugData.readableBytesView)) as? [String: Any] {
            reason = object["reason"] as? String ?? ""
        }
        pool.logger.debug(
            "APNs sent GOAWAY",
            metadata: ["apns.connection": "\(connectionID)", "apns.last_stream_id": "\(lastStreamID)", "apns.reason": "\(reason)", "http2.error": "\(errorCode)"]
        )
        // Streams above last-stream-id were never processed: send them again elsewhere, in order.
        let requests = inFlight.removeAll { $0 > lastStreamID }.map(\.request)
        if state != .closed { state = .draining }
        pool.connectionStartedDraining(self)
        if !requests.isEmpty { pool.requeueUnprocessed(requests) }
        closeIfDrained()
        scheduleDrainDeadline()
    }

    /// A server that promised to answer the streams below its GOAWAY may still fail to: after the
    /// drain timeout the connection closes and what is left counts as a lost-connection attempt.
    private func scheduleDrainDeadline() {
        guard let context, state == .draining else { return }
        let loopBoundSelf = NIOLoopBound(self, eventLoop: context.eventLoop)
        context.eventLoop.scheduleTask(in: pool.configuration.drainTimeout) {
            let handler = loopBoundSelf.value
            guard handler.state == .draining, !handler.inFlight.isEmpty else { return }
            handler.pool.logger.debug(
                "APNs connection did not finish its streams after GOAWAY; closing it",
                metadata: ["apns.connection": "\(handler.connectionID)", "apns.in_flight": "\(handler.inFlight.count)"]
            )
            handler.context?.close(promise: nil)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        // Without the multiplexer nobody else returns connection-level flow-control credit.
        if unacknowledgedInboundBytes >= 16_384 {
            context.write(
                wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .windowUpdate(windowSizeIncrement: unacknowledgedInboundBytes))),
                promise: nil
            )
            unacknowledgedInboundBytes = 0
            context.flush()
        }
        pool.readCycleEnded()
        context.fireChannelReadComplete()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let closed = event as? StreamClosedEvent, let entry = inFlight.remove(closed.streamID) {
            // Closed without a complete response: the stream was reset locally or the connection is
            // going away. Whether APNs processed it is unknown, so it counts as a failed attempt.
            pool.requestFailed(entry.request, error: .connectionFailed("stream closed without a response"))
            closeIfDrained()
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        pool.logger.debug("APNs connection error", metadata: ["apns.connection": "\(connectionID)", "error": "\(error)"])
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        state = .closed
        pingTask?.cancel()
        pingTask = nil
        let orphans = inFlight.removeAll { _ in true }.map(\.request)
        pool.connectionClosed(self, orphans: orphans)
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }
}
