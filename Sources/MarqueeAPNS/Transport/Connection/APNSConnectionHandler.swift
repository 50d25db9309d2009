import Foundation
import Logging
import MarqueeCore
import NIOCore
import NIOHPACK
import NIOHTTP2

/// Speaks HTTP/2 frames for one connection, behind `APNSHTTP2Framer`: no child channel, pipeline or
/// task per request. It writes HEADERS (+ DATA with END_STREAM) per
/// request and reads the response frames; every decision (stream limits, which token, what became
/// of each request when a stream or the connection ends) is `APNSConnectionStateMachine`'s. It is
/// given what it needs at init and reports to its `APNSConnectionDelegate`; the pool decides what to
/// write and what to do with each outcome. Event-loop confined, like every handler.
final class APNSConnectionHandler: ChannelDuplexHandler, APNSPoolConnection {
    typealias InboundIn = APNSHTTP2Read
    typealias OutboundIn = HTTP2Frame
    typealias OutboundOut = APNSHTTP2Write
    typealias State = APNSConnectionStateMachine<APNSQueuedRequest>.State

    let connectionID: Int
    private let delegate: any APNSConnectionDelegate
    private let scheme: String
    private let authority: String
    private let tokenCache: APNSProviderTokenCache
    private let pingInterval: TimeAmount
    private let drainTimeout: TimeAmount
    private let metrics: APNSClientMetrics
    private let logger: Logger
    private var machine: APNSConnectionStateMachine<APNSQueuedRequest>
    /// What the path needs in flight, from the latency of the answers (`nil`: the fixed window,
    /// the whole stream budget).
    private var concurrency: APNSConcurrencyLimit?
    private var context: ChannelHandlerContext?
    /// The owner asked to close before the channel was active.
    private var closeRequested = false
    private var unacknowledgedInboundBytes = 0
    private var lastReadAt = NIODeadline.now()
    private var pingTask: RepeatedTask?

    init(
        connectionID: Int,
        transport: APNSClientConfiguration.Transport,
        scheme: String,
        authority: String,
        tokenCache: APNSProviderTokenCache,
        metrics: APNSClientMetrics,
        logger: Logger,
        delegate: any APNSConnectionDelegate
    ) {
        self.connectionID = connectionID
        self.delegate = delegate
        self.scheme = scheme
        self.authority = authority
        self.tokenCache = tokenCache
        self.pingInterval = transport.pingInterval
        self.drainTimeout = transport.drainTimeout
        self.metrics = metrics
        var logger = logger
        logger[metadataKey: "apns.connection"] = "\(connectionID)"
        self.logger = logger
        machine = APNSConnectionStateMachine(maximumStreams: transport.maximumStreamsPerConnection)
        if transport.adaptiveConcurrency {
            concurrency = APNSConcurrencyLimit(settings: .init(floor: transport.concurrencyFloor))
        }
    }

    var state: State { machine.state }
    var becameReady: Bool { machine.becameReady }
    var tokenAccepted: Bool { machine.tokenAccepted }
    var effectiveStreamLimit: Int { machine.effectiveStreamLimit }
    var inFlightCount: Int { machine.inFlightCount }

    /// The most requests this connection takes in flight now: its concurrency limit within its
    /// stream budget.
    var concurrencyLimit: Int {
        min(concurrency?.limit ?? .max, machine.effectiveStreamLimit)
    }

    /// How many more streams the pool may open here now: free streams, up to the concurrency limit.
    var availableStreams: Int {
        guard context != nil else { return 0 }
        guard let concurrency else { return machine.availableStreams }
        return min(machine.availableStreams, max(0, concurrency.limit - machine.inFlightCount))
    }

    // MARK: Writing

    /// The `authorization` value for the next writes, or `nil` when this connection may not use the
    /// current token: then it has already begun draining, so it reports no free streams and dispatch
    /// cannot choose it again (see `APNSConnectionTokenState` for the rules).
    func authorizationForWrites(now: Date) throws(APNSError) -> String? {
        switch machine.authorization(current: try tokenCache.currentToken(), now: now) {
        case .write(let authorization):
            return authorization
        case .retired(let closeConnection):
            delegate.connectionStartedDraining(self)
            if closeConnection { context?.close(promise: nil) }
            return nil
        }
    }

    /// APNs called this connection's token `generation` expired.
    func tokenWasRejected(generation: Int) {
        machine.tokenWasRejected(generation: generation)
    }

    /// Writes one request on a new stream; `flush()` sends a batch of them.
    func write(_ request: APNSQueuedRequest, authorization: String, now: Date, sentAt: NIODeadline) {
        guard let context, let (streamID, startedDraining) = machine.open(request, sentAt: sentAt) else {
            // Unreachable while `availableStreams` is checked first; never drop a request regardless.
            delegate.connection(self, didNotProcess: [request])
            return
        }
        let body = request.operation.body
        switch request.operation {
        case .device(let push):
            let fields = APNSOperation.deviceHeaderFields(
                push,
                scheme: scheme,
                authority: authority,
                authorization: authorization
            )
            context.write(
                wrapOutboundOut(.deviceHeaders(fields, streamID: streamID, endStream: body == nil)),
                promise: nil
            )
        case .broadcast, .manageChannels:
            let headers = request.operation.headers(
                scheme: scheme,
                authority: authority,
                authorization: authorization,
                now: now
            )
            context.write(
                wrapOutboundOut(
                    .frame(
                        HTTP2Frame(
                            streamID: streamID,
                            payload: .headers(.init(headers: headers, endStream: body == nil))
                        )
                    )
                ),
                promise: nil
            )
        }
        if let body {
            context.write(
                wrapOutboundOut(
                    .frame(
                        HTTP2Frame(streamID: streamID, payload: .data(.init(data: .byteBuffer(body), endStream: true)))
                    )
                ),
                promise: nil
            )
        }
        if startedDraining { delegate.connectionStartedDraining(self) }
    }

    func flush() {
        context?.flush()
    }

    /// Closes at once (client shutdown); requests in flight become uncertain.
    func closeForShutdown(promise: EventLoopPromise<Void>) {
        machine.closingForShutdown()
        guard let context, state != .closed else {
            closeRequested = true
            promise.succeed()
            return
        }
        context.channel.closeFuture.cascade(to: promise)
        context.close(promise: nil)
    }

    // MARK: Channel events

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func channelActive(context: ChannelHandlerContext) {
        // A connection attempt that completes after shutdown has nobody to serve.
        if closeRequested {
            context.close(promise: nil)
            return
        }
        lastReadAt = .now()
        let loopBoundSelf = NIOLoopBound(self, eventLoop: context.eventLoop)
        pingTask = context.eventLoop.scheduleRepeatedTask(initialDelay: pingInterval, delay: pingInterval) { _ in
            loopBoundSelf.value.pingTimerFired()
        }
        context.fireChannelActive()
    }

    /// HTTP/2 PING keep-alive: ping an idle connection; a ping unanswered for a whole interval means
    /// the connection is dead even if TCP has not noticed.
    private func pingTimerFired() {
        guard let context else { return }
        switch machine.pingTimerFired(idle: NIODeadline.now() - lastReadAt, interval: pingInterval) {
        case .none:
            break
        case .sendPing:
            context.writeAndFlush(
                wrapOutboundOut(
                    .frame(
                        HTTP2Frame(
                            streamID: .rootStream,
                            payload: .ping(HTTP2PingData(withInteger: 0x4D61_7271), ack: false)
                        )
                    )
                ),
                promise: nil
            )
        case .close:
            logger.debug("APNs connection did not answer a PING; closing it")
            context.close(promise: nil)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        lastReadAt = .now()
        let frame: HTTP2Frame
        switch unwrapInboundIn(data) {
        case .response(let response, let streamID, let endStream):
            if let end = machine.receivedResponse(response, endStream: endStream, on: streamID) { report(end) }
            return
        case .frame(let read):
            frame = read
        }
        switch frame.payload {
        case .data(let data):
            unacknowledgedInboundBytes += data.data.readableBytes
            guard case .byteBuffer(let chunk) = data.data else { return }
            if let end = machine.receivedData(chunk, endStream: data.endStream, on: frame.streamID) {
                report(end)
            }
        case .settings(.settings(let settings)):
            var maxConcurrentStreams: Int?
            for setting in settings where setting.parameter == .maxConcurrentStreams {
                maxConcurrentStreams = setting.value
            }
            if machine.settingsReceived(maxConcurrentStreams: maxConcurrentStreams) {
                delegate.connectionBecameReady(self)
            }
        case .goAway(let lastStreamID, let errorCode, let opaqueData):
            receivedGoAway(lastStreamID: lastStreamID, errorCode: errorCode, debugData: opaqueData)
        case .rstStream(let errorCode):
            if let end = machine.receivedReset(errorCode, on: frame.streamID) { report(end) }
        case .ping(_, ack: true):
            machine.pingAnswered()
        default:
            break
        }
    }

    /// Hands a request that left the connection to the delegate, by its fate.
    private func report(_ end: APNSConnectionStateMachine<APNSQueuedRequest>.StreamEnd) {
        switch end.fate {
        case .answered(let response, let tokenGeneration, let sentAt, let inFlightAtSend):
            if let kind = end.request.operation.pushKind {
                // `lastReadAt` was read when this frame arrived: no second clock read per answer.
                metrics.recordDuration(kind, nanoseconds: (lastReadAt - sentAt).nanoseconds)
            }
            // Before APNs accepted the token the connection has one stream, which says nothing
            // about the path's capacity.
            if machine.tokenAccepted {
                concurrency?.record(
                    sentAt: sentAt,
                    answeredAt: lastReadAt,
                    inFlightAtSend: inFlightAtSend,
                    budget: machine.effectiveStreamLimit
                )
            }
            delegate.connection(self, answered: end.request, response: response, tokenGeneration: tokenGeneration)
        case .unprocessed:
            delegate.connection(self, didNotProcess: [end.request])
        case .uncertain(let reason):
            delegate.connection(self, leftUncertain: end.request, reason: reason)
        }
        if end.closeConnection { context?.close(promise: nil) }
    }

    private func receivedGoAway(lastStreamID: HTTP2StreamID, errorCode: HTTP2ErrorCode, debugData: ByteBuffer?) {
        var reason = ""
        if let debugData,
            let object = try? JSONSerialization.jsonObject(with: Data(debugData.readableBytesView)) as? [String: Any]
        {
            reason = object["reason"] as? String ?? ""
        }
        logger.debug(
            "APNs sent GOAWAY",
            metadata: [
                "apns.last_stream_id": "\(lastStreamID)", "apns.reason": "\(reason)", "http2.error": "\(errorCode)",
            ]
        )
        let effects = machine.receivedGoAway(lastStreamID: lastStreamID)
        delegate.connectionStartedDraining(self)
        // Streams above last-stream-id were never processed: they go again elsewhere, in order.
        if !effects.unprocessed.isEmpty { delegate.connection(self, didNotProcess: effects.unprocessed) }
        if effects.closeConnection { context?.close(promise: nil) }
        if effects.scheduleDrainDeadline { scheduleDrainDeadline() }
    }

    /// A server that promised to answer the streams below its GOAWAY may still fail to: after the
    /// drain timeout the connection closes and what is left is uncertain.
    private func scheduleDrainDeadline() {
        guard let context else { return }
        let loopBoundSelf = NIOLoopBound(self, eventLoop: context.eventLoop)
        context.eventLoop.scheduleTask(in: drainTimeout) {
            let handler = loopBoundSelf.value
            guard handler.machine.drainDeadlinePassed() else { return }
            handler.logger.debug(
                "APNs connection did not finish its streams after GOAWAY; closing it",
                metadata: ["apns.in_flight": "\(handler.machine.inFlightCount)"]
            )
            handler.context?.close(promise: nil)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        // The framer leaves the connection's receive window to this handler: credit goes back for
        // the DATA read, in one WINDOW_UPDATE per 16 KiB.
        if unacknowledgedInboundBytes >= 16_384 {
            context.write(
                wrapOutboundOut(
                    .frame(
                        HTTP2Frame(
                            streamID: .rootStream,
                            payload: .windowUpdate(windowSizeIncrement: unacknowledgedInboundBytes)
                        )
                    )
                ),
                promise: nil
            )
            unacknowledgedInboundBytes = 0
            context.flush()
        }
        delegate.connectionReadCycleEnded(self)
        context.fireChannelReadComplete()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        logger.debug("APNs connection error", metadata: ["error": "\(error)"])
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        pingTask?.cancel()
        pingTask = nil
        let closed = machine.connectionClosed()
        delegate.connectionClosed(
            self,
            wasReady: closed.wasReady,
            unprocessed: closed.unprocessed,
            uncertain: closed.uncertain,
            reason: closed.reason
        )
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }
}
