import Logging
import MarqueeCore
import NIOCore
import NIOHPACK
import NIOHTTP2

/// Serves one HTTP/2 connection frame by frame on its event loop, without a child channel per
/// stream: it collects each request's HEADERS and DATA by stream ID, answers it on the loop and
/// flushes every few answers and at the end of each read burst. This keeps the emulator well ahead
/// of the clients it tests.
///
/// It also does what `NIOHTTP2Handler` leaves to stream channels in this mode: replenishing the
/// connection's flow-control window. And it implements the APNs connection rules: one concurrent
/// stream until a valid provider token; GOAWAY with a JSON reason after N streams when a fault asks
/// for it, `IdleTimeout` after a configured silence, `Shutdown` when the emulator stops.
final class APNSHTTP2FrameHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    /// The connection window the handler grants at start and tops up to.
    static let connectionWindow = 1 << 24
    /// Per-stream window advertised in SETTINGS: any single APNs body fits many times over.
    static let streamWindow = 1 << 20
    /// Answers are flushed at the end of each read burst, and also every this many within one: a
    /// client keeping many streams in flight sends its next requests while the rest of a burst is
    /// being answered, instead of waiting for the whole burst (measured: a third more pushes a
    /// second over TLS with 100 streams in flight; from 16 to 64 it makes no difference).
    static let responsesPerFlush = 32

    private let processor: APNSRequestProcessor
    /// GOAWAY goes out below NIOHTTP2Handler (see `GoAwayWriter` for why).
    private let goAwayWriter: GoAwayWriter
    private var authenticator: ConnectionAuthenticator
    private let logger: Logger
    private var pending: [HTTP2StreamID: EmulatorRequest] = [:]
    private var highestStreamID: HTTP2StreamID = .rootStream
    private let idleTimeout: TimeAmount?
    /// When the last frame arrived; kept only when there is an idle timeout.
    private var lastFrameAt = NIODeadline.now()
    private var idleCheck: Scheduled<Void>?
    private var streamLimitRaised = false
    private var streamsReceived = 0
    private let goAwayFault: (afterStreams: Int, reason: APNSErrorReason)?
    private var goAwayLastStreamID: HTTP2StreamID?
    private var delayedResponses = 0
    private var consumedWindow = 0
    private var needsFlush = false
    private var flushScheduled = false
    private var unflushedResponses = 0

    init(processor: APNSRequestProcessor, goAwayWriter: GoAwayWriter, logger: Logger) {
        self.processor = processor
        self.goAwayWriter = goAwayWriter
        self.logger = logger
        self.authenticator = ConnectionAuthenticator(environment: processor.listener.environment)
        self.goAwayFault = processor.state.goAwayFault(for: processor.listener.environment)
        self.idleTimeout = processor.state.configuration.idleTimeout.map { TimeAmount($0) }
    }

    /// The SETTINGS a new connection starts with.
    static func initialSettings(configuration: APNSEmulatorConfiguration) -> HTTP2Settings {
        [
            HTTP2Setting(parameter: .maxConcurrentStreams, value: configuration.maxConcurrentStreamsBeforeFirstToken),
            HTTP2Setting(parameter: .initialWindowSize, value: streamWindow),
            HTTP2Setting(parameter: .maxHeaderListSize, value: 16_384),
        ]
    }

    func channelActive(context: ChannelHandlerContext) {
        let increment = Self.connectionWindow - 65_535
        context.writeAndFlush(
            wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .windowUpdate(windowSizeIncrement: increment))),
            promise: nil
        )
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        idleCheck?.cancel()
        context.fireChannelInactive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard event is EmulatorShutdownEvent else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        goAwayAndClose(.shutdown, context: context)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        if let idleTimeout {
            lastFrameAt = .now()
            // Silence counts from the client's first frame: a TLS handshake that is slow on a
            // loaded machine is not an idle HTTP/2 connection.
            if idleCheck == nil { scheduleIdleCheck(at: lastFrameAt + idleTimeout, context: context) }
        }
        switch frame.payload {
        case .headers(let headers):
            if var request = pending.removeValue(forKey: frame.streamID) {
                // Trailers: the request is complete only when they end the stream.
                if headers.endStream {
                    complete(request, on: frame.streamID, context: context)
                } else {
                    request.addTrailers(headers.headers)
                    pending[frame.streamID] = request
                }
                return
            }
            if let last = goAwayLastStreamID, frame.streamID > last { return }
            highestStreamID = max(highestStreamID, frame.streamID)
            streamsReceived += 1
            let request = EmulatorRequest(headers: headers.headers)
            if let fault = goAwayFault, streamsReceived == fault.afterStreams {
                sendGoAway(lastStreamID: frame.streamID, reason: fault.reason, context: context)
            }
            if headers.endStream {
                complete(request, on: frame.streamID, context: context)
            } else {
                pending[frame.streamID] = request
            }
        case .data(let data):
            consumedWindow += data.data.readableBytes + (data.paddingBytes.map { $0 + 1 } ?? 0)
            if consumedWindow >= Self.connectionWindow / 2 {
                context.write(
                    wrapOutboundOut(
                        HTTP2Frame(streamID: .rootStream, payload: .windowUpdate(windowSizeIncrement: consumedWindow))
                    ),
                    promise: nil
                )
                consumedWindow = 0
                needsFlush = true
            }
            guard var request = pending.removeValue(forKey: frame.streamID) else { return }
            if case .byteBuffer(let buffer) = data.data { request.appendBody(buffer.readableBytesView) }
            if data.endStream {
                complete(request, on: frame.streamID, context: context)
            } else {
                pending[frame.streamID] = request
            }
        case .rstStream:
            // A stream the client cancels needs no answer; after a GOAWAY it may have been the last
            // one the connection was waiting for.
            if pending.removeValue(forKey: frame.streamID) != nil { closeIfDrained(context: context) }
        default:
            break
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        flushIfNeeded(context: context)
        context.fireChannelReadComplete()
    }

    private func flushIfNeeded(context: ChannelHandlerContext) {
        guard needsFlush else { return }
        needsFlush = false
        unflushedResponses = 0
        context.flush()
    }

    /// Responses written during a read burst are flushed at its end at the latest; should frames
    /// reach the handler outside a read (buffered by NIOHTTP2Handler and released later), a flush on
    /// the next loop tick makes sure no answer waits in the buffer.
    private func scheduleFlush(context: ChannelHandlerContext) {
        needsFlush = true
        guard !flushScheduled else { return }
        flushScheduled = true
        context.eventLoop.assumeIsolated().execute {
            self.flushScheduled = false
            self.flushIfNeeded(context: context)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A stream error is answered by NIOHTTP2Handler itself (RST_STREAM) and the connection goes
        // on. Anything else ends the connection: after a connection error NIOHTTP2Handler has sent
        // GOAWAY and reads no further frame, so a connection left open would never answer the
        // streams still on it (the client would wait out its drain timeout and call them uncertain).
        if error is NIOHTTP2Errors.StreamError { return }
        logger.debug("APNs connection error; closing it", metadata: ["error": "\(error)"])
        context.close(promise: nil)
    }

    private func complete(_ request: EmulatorRequest, on streamID: HTTP2StreamID, context: ChannelHandlerContext) {
        if request.contentLengthIsViolated {
            context.write(
                wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .rstStream(.protocolError))),
                promise: nil
            )
            scheduleFlush(context: context)
            closeIfDrained(context: context)
            return
        }
        let response = processor.process(request, authenticator: &authenticator)
        if response.resetsConnection {
            resetConnection(context: context)
            return
        }
        if response.authenticated, !streamLimitRaised {
            streamLimitRaised = true
            let limit = processor.state.configuration.maxConcurrentStreams
            context.write(
                wrapOutboundOut(
                    HTTP2Frame(
                        streamID: .rootStream,
                        payload: .settings(.settings([HTTP2Setting(parameter: .maxConcurrentStreams, value: limit)]))
                    )
                ),
                promise: nil
            )
        }
        if let delay = response.delay, delay > .zero {
            delayedResponses += 1
            context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(delay)) {
                self.delayedResponses -= 1
                guard context.channel.isActive else { return }
                self.write(response, on: streamID, context: context)
                context.flush()
                self.closeIfDrained(context: context)
            }
            return
        }
        write(response, on: streamID, context: context)
        unflushedResponses += 1
        if unflushedResponses >= Self.responsesPerFlush {
            needsFlush = true
            flushIfNeeded(context: context)
        } else {
            scheduleFlush(context: context)
        }
        closeIfDrained(context: context)
    }

    private func write(_ response: EmulatorResponse, on streamID: HTTP2StreamID, context: ChannelHandlerContext) {
        var headers = HPACKHeaders()
        headers.reserveCapacity(response.headers.count + 1)
        headers.add(name: ":status", value: Self.statusText(response.status))
        // Response IDs are unique per response: indexing them would only churn HPACK's table.
        for (name, value) in response.headers { headers.add(name: name, value: value, indexing: .nonIndexable) }
        if response.body.isEmpty {
            context.write(
                wrapOutboundOut(
                    HTTP2Frame(streamID: streamID, payload: .headers(.init(headers: headers, endStream: true)))
                ),
                promise: nil
            )
        } else {
            headers.add(name: "content-length", value: String(response.body.count))
            context.write(
                wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .headers(.init(headers: headers)))),
                promise: nil
            )
            let buffer = context.channel.allocator.buffer(bytes: response.body)
            context.write(
                wrapOutboundOut(
                    HTTP2Frame(streamID: streamID, payload: .data(.init(data: .byteBuffer(buffer), endStream: true)))
                ),
                promise: nil
            )
        }
    }

    /// Closes the connection as APNs does when it stops serving one: GOAWAY with the reason and the
    /// last stream it processed (every complete request has been answered; those still arriving are
    /// not, and the GOAWAY tells the client so), then the connection closes.
    /// (After an earlier GOAWAY, only the closing is left to do.)
    private func goAwayAndClose(_ reason: APNSErrorReason, context: ChannelHandlerContext) {
        if goAwayLastStreamID == nil {
            let lastProcessed = pending.keys.min().map { HTTP2StreamID(max(0, Int($0) - 2)) } ?? highestStreamID
            sendGoAway(lastStreamID: lastProcessed, reason: reason, context: context)
        }
        pending.removeAll()
        context.flush()
        closeIfDrained(context: context)
    }

    private func scheduleIdleCheck(at deadline: NIODeadline, context: ChannelHandlerContext) {
        idleCheck = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) {
            self.checkIdle(context: context)
        }
    }

    /// APNs closes a connection that has been silent too long with GOAWAY `IdleTimeout`. Any frame
    /// counts, PING included, as Apple suggests a PING to keep an idle connection.
    private func checkIdle(context: ChannelHandlerContext) {
        guard let idleTimeout, goAwayLastStreamID == nil, context.channel.isActive else { return }
        let idleUntil = lastFrameAt + idleTimeout
        if idleUntil <= .now(), pending.isEmpty, delayedResponses == 0 {
            goAwayAndClose(.idleTimeout, context: context)
        } else {
            scheduleIdleCheck(at: max(idleUntil, .now() + .milliseconds(10)), context: context)
        }
    }

    private func sendGoAway(lastStreamID: HTTP2StreamID, reason: APNSErrorReason, context: ChannelHandlerContext) {
        logger.debug(
            "GOAWAY",
            metadata: [
                "apns.reason": "\(reason.reasonString)", "http2.last_stream_id": "\(lastStreamID)",
                "emulator.listener": "\(processor.listener)",
            ]
        )
        goAwayLastStreamID = lastStreamID
        var debugData = Array("{\"reason\":".utf8)
        JSONValue.writeString(reason.reasonString, into: &debugData)
        debugData.append(UInt8(ascii: "}"))
        // Answers already written go out first: the GOAWAY must not overtake them.
        context.flush()
        goAwayWriter.writeGoAway(lastStreamID: lastStreamID, errorCode: .noError, debugData: debugData)
    }

    /// After a GOAWAY, closes the connection once every stream up to the last one is answered.
    private func closeIfDrained(context: ChannelHandlerContext) {
        guard let last = goAwayLastStreamID, delayedResponses == 0,
            !pending.keys.contains(where: { $0 <= last })
        else { return }
        goAwayLastStreamID = .rootStream
        context.flush()
        context.close(promise: nil)
    }

    /// Drops the connection without answering and without GOAWAY, as a connection reset does.
    private func resetConnection(context: ChannelHandlerContext) {
        pending.removeAll()
        context.close(promise: nil)
    }

    private static let commonStatusTexts: [Int: String] = Dictionary(
        uniqueKeysWithValues: [200, 201, 204, 400, 403, 404, 405, 410, 413, 429, 500, 503].map { ($0, String($0)) }
    )

    private static func statusText(_ status: Int) -> String {
        commonStatusTexts[status] ?? String(status)
    }
}
