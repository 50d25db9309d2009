import NIOCore
import NIOHPACK
import NIOHTTP2

/// HTTP/2 for an APNs client connection, in place of `NIOHTTP2Handler`: bytes in, `HTTP2Frame`s and
/// answers up to `APNSConnectionHandler`; `HTTP2Frame`s down, bytes out.
///
/// An APNs connection is a narrow use of HTTP/2: the client opens every stream, with a POST (or a
/// GET or DELETE for channel management) of a small body, and the server answers each with HEADERS
/// and perhaps a small DATA. `APNSConnectionStateMachine` already keeps the stream table, the
/// limits and what each stream's end means, so `NIOHTTP2Handler`'s general connection and stream
/// state machines did that work a second time for every frame, and were the largest cost on both
/// sides of a fan-out (its read side a quarter of the server's time in a profile). What stays here
/// is what the protocol itself asks of the client:
/// - the preface and SETTINGS, acknowledging the server's and applying them (header table size,
///   initial window, frame size; MAX_CONCURRENT_STREAMS goes up to the connection handler);
/// - HPACK both ways, one encoder (NIOHPACK's) and one decoder (`APNSHPACKDecoder`, straight to the
///   fields of an answer) per connection;
/// - send-side flow control (`APNSHTTP2SendWindows`); the receive side's connection credit is the
///   connection handler's, padding excepted;
/// - PING answered; HEADERS with CONTINUATION, padding and priority read; frames of unknown type
///   ignored (§5.5);
/// - anything the server gets wrong that ends the connection (PUSH_PROMISE, which SETTINGS
///   disabled, a frame too large, a broken header block, a flow-control violation) sends GOAWAY
///   and closes, and the connection handler decides what became of each stream in flight.
///
/// The frames of one flush are written into one buffer per frame write, reused: the TLS handler's
/// `APNSWriteCoalescingHandler` gathers them into records.
final class APNSHTTP2Framer: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = APNSHTTP2Read
    typealias OutboundIn = APNSHTTP2Write
    typealias OutboundOut = IOData

    private enum FrameType {
        static let data: UInt8 = 0x0
        static let headers: UInt8 = 0x1
        static let priority: UInt8 = 0x2
        static let rstStream: UInt8 = 0x3
        static let settings: UInt8 = 0x4
        static let pushPromise: UInt8 = 0x5
        static let ping: UInt8 = 0x6
        static let goAway: UInt8 = 0x7
        static let windowUpdate: UInt8 = 0x8
        static let continuation: UInt8 = 0x9
    }

    private enum Flag {
        static let endStream: UInt8 = 0x1
        static let ack: UInt8 = 0x1
        static let endHeaders: UInt8 = 0x4
        static let padded: UInt8 = 0x8
        static let priority: UInt8 = 0x20
    }

    /// The settings this client knows by name; others are read as extension settings.
    private static let knownSettings: [(parameter: HTTP2SettingsParameter, code: UInt16)] = [
        (.headerTableSize, 1), (.enablePush, 2), (.maxConcurrentStreams, 3), (.initialWindowSize, 4),
        (.maxFrameSize, 5), (.maxHeaderListSize, 6), (.enableConnectProtocol, 8),
    ]

    private static let preface: StaticString = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

    private let localSettings: HTTP2Settings
    private var reader = APNSHTTP2FrameReader()
    private var windows = APNSHTTP2SendWindows()
    private var encoder: HPACKEncoder
    /// When a device push's repeating fields may go as the bytes written for them last time.
    private var repeatCache = APNSHPACKRepeatCache()
    private var decoder: APNSHPACKDecoder
    /// A header block still waiting for its CONTINUATION frames.
    private var partialHeaders: (streamID: HTTP2StreamID, endStream: Bool, block: ByteBuffer)?
    /// Reused for every frame written: the handler below copies each write's bytes at once.
    private var output: ByteBuffer
    private var prefaceSent = false
    private var failed = false

    init(localSettings: HTTP2Settings, allocator: ByteBufferAllocator = ByteBufferAllocator()) {
        self.localSettings = localSettings
        self.encoder = HPACKEncoder(allocator: allocator)
        var maximumHeaderListSize = HPACKDecoder.defaultMaxHeaderListSize
        var allowedTableSize = HPACKDecoder.maxDynamicTableSize
        for setting in localSettings {
            switch setting.parameter {
            case .maxHeaderListSize: maximumHeaderListSize = setting.value
            case .headerTableSize: allowedTableSize = setting.value
            default: break
            }
        }
        self.decoder = APNSHPACKDecoder(
            allowedTableSize: allowedTableSize,
            maximumHeaderListSize: maximumHeaderListSize
        )
        self.output = allocator.buffer(capacity: 1024)
    }

    // MARK: The connection's start

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { sendPreface(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        sendPreface(context: context)
        context.fireChannelActive()
    }

    private func sendPreface(context: ChannelHandlerContext) {
        guard !prefaceSent else { return }
        prefaceSent = true
        output.clear()
        output.writeStaticString(Self.preface)
        writeSettings(localSettings, to: &output)
        passOutput(context: context, promise: nil)
        context.flush()
    }

    // MARK: Reading

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !failed else { return }
        reader.append(unwrapInboundIn(data))
        do throws(APNSHTTP2ProtocolError) {
            while let frame = try reader.nextFrame() {
                try process(frame, context: context)
                if failed { return }
            }
        } catch {
            connectionError(error, context: context)
        }
    }

    private func process(
        _ frame: APNSHTTP2FrameReader.Frame,
        context: ChannelHandlerContext
    ) throws(APNSHTTP2ProtocolError) {
        if let partial = partialHeaders {
            guard frame.type == FrameType.continuation, frame.streamID == partial.streamID else {
                throw APNSHTTP2ProtocolError(
                    .protocolError,
                    "a header block on stream \(partial.streamID) was not continued"
                )
            }
        }
        switch frame.type {
        case FrameType.data:
            try readData(frame, context: context)
        case FrameType.headers:
            try readHeaders(frame, context: context)
        case FrameType.continuation:
            try readContinuation(frame, context: context)
        case FrameType.priority:
            break
        case FrameType.rstStream:
            try readResetStream(frame, context: context)
        case FrameType.settings:
            try readSettings(frame, context: context)
        case FrameType.pushPromise:
            throw APNSHTTP2ProtocolError(.protocolError, "PUSH_PROMISE, which this client's SETTINGS disabled")
        case FrameType.ping:
            try readPing(frame, context: context)
        case FrameType.goAway:
            try readGoAway(frame, context: context)
        case FrameType.windowUpdate:
            try readWindowUpdate(frame, context: context)
        default:
            // Frames of a type this client does not know are ignored (§5.5).
            break
        }
    }

    private func readContinuation(
        _ frame: APNSHTTP2FrameReader.Frame,
        context: ChannelHandlerContext
    ) throws(APNSHTTP2ProtocolError) {
        guard partialHeaders != nil else {
            throw APNSHTTP2ProtocolError(.protocolError, "CONTINUATION without HEADERS on stream \(frame.streamID)")
        }
        var payload = frame.payload
        partialHeaders!.block.writeBuffer(&payload)
        if frame.has(Flag.endHeaders) {
            let (streamID, endStream, block) = partialHeaders!
            partialHeaders = nil
            try deliverHeaders(block, endStream: endStream, on: streamID, context: context)
        }
    }

    private func readResetStream(
        _ frame: APNSHTTP2FrameReader.Frame,
        context: ChannelHandlerContext
    ) throws(APNSHTTP2ProtocolError) {
        var payload = frame.payload
        guard frame.streamID != .rootStream, let code = payload.readInteger(as: UInt32.self),
            payload.readableBytes == 0
        else {
            throw APNSHTTP2ProtocolError(.frameSizeError, "a malformed RST_STREAM")
        }
        failWaiting(windows.streamEnded(frame.streamID))
        context.fireChannelRead(
            wrapInboundOut(
                .frame(
                    HTTP2Frame(streamID: frame.streamID, payload: .rstStream(HTTP2ErrorCode(networkCode: Int(code))))
                )
            )
        )
    }

    /// A PING from APNs is answered here, at once; the ack of one of this client's own goes up the pipeline.
    private func readPing(
        _ frame: APNSHTTP2FrameReader.Frame,
        context: ChannelHandlerContext
    ) throws(APNSHTTP2ProtocolError) {
        guard frame.streamID == .rootStream, frame.payload.readableBytes == 8 else {
            throw APNSHTTP2ProtocolError(.frameSizeError, "a malformed PING")
        }
        let opaque = frame.payload.getInteger(at: frame.payload.readerIndex, as: UInt64.self)!
        if frame.has(Flag.ack) {
            context.fireChannelRead(
                wrapInboundOut(
                    .frame(
                        HTTP2Frame(streamID: .rootStream, payload: .ping(HTTP2PingData(withInteger: opaque), ack: true))
                    )
                )
            )
        } else {
            output.clear()
            writeFrameHeader(length: 8, type: FrameType.ping, flags: Flag.ack, streamID: .rootStream, to: &output)
            output.writeInteger(opaque)
            passOutput(context: context, promise: nil)
            context.flush()
        }
    }

    private func readGoAway(
        _ frame: APNSHTTP2FrameReader.Frame,
        context: ChannelHandlerContext
    ) throws(APNSHTTP2ProtocolError) {
        var payload = frame.payload
        guard frame.streamID == .rootStream, let last = payload.readInteger(as: UInt32.self),
            let code = payload.readInteger(as: UInt32.self)
        else {
            throw APNSHTTP2ProtocolError(.frameSizeError, "a malformed GOAWAY")
        }
        let lastStreamID = HTTP2StreamID(Int32(last & 0x7FFF_FFFF))
        failWaiting(windows.streamsAbove(lastStreamID))
        let goAway = HTTP2Frame.FramePayload.goAway(
            lastStreamID: lastStreamID,
            errorCode: HTTP2ErrorCode(networkCode: Int(code)),
            opaqueData: payload.readableBytes > 0 ? payload : nil
        )
        context.fireChannelRead(wrapInboundOut(.frame(HTTP2Frame(streamID: .rootStream, payload: goAway))))
    }

    private func readWindowUpdate(
        _ frame: APNSHTTP2FrameReader.Frame,
        context: ChannelHandlerContext
    ) throws(APNSHTTP2ProtocolError) {
        guard frame.payload.readableBytes == 4 else {
            throw APNSHTTP2ProtocolError(.frameSizeError, "a malformed WINDOW_UPDATE")
        }
        let increment = Int(frame.payload.getInteger(at: frame.payload.readerIndex, as: UInt32.self)! & 0x7FFF_FFFF)
        var sent = false
        try windows.windowUpdate(streamID: frame.streamID, increment: increment) {
            writeData($0, context: context)
            sent = true
        }
        if sent { context.flush() }
    }

    private func readData(
        _ frame: APNSHTTP2FrameReader.Frame,
        context: ChannelHandlerContext
    ) throws(APNSHTTP2ProtocolError) {
        guard frame.streamID != .rootStream else {
            throw APNSHTTP2ProtocolError(.protocolError, "DATA on stream 0")
        }
        let body = try Self.unpadded(frame)
        let padding = frame.payload.readableBytes - body.readableBytes
        if padding > 0 {
            // The connection handler returns credit for the bytes it is given; padding (and its
            // length byte) counts against the window too, so it is returned here.
            output.clear()
            writeFrameHeader(length: 4, type: FrameType.windowUpdate, flags: 0, streamID: .rootStream, to: &output)
            output.writeInteger(UInt32(padding))
            passOutput(context: context, promise: nil)
        }
        let endStream = frame.has(Flag.endStream)
        if endStream { failWaiting(windows.streamEnded(frame.streamID)) }
        context.fireChannelRead(
            wrapInboundOut(
                .frame(
                    HTTP2Frame(
                        streamID: frame.streamID,
                        payload: .data(.init(data: .byteBuffer(body), endStream: endStream))
                    )
                )
            )
        )
    }

    private func readHeaders(
        _ frame: APNSHTTP2FrameReader.Frame,
        context: ChannelHandlerContext
    ) throws(APNSHTTP2ProtocolError) {
        guard frame.streamID != .rootStream else {
            throw APNSHTTP2ProtocolError(.protocolError, "HEADERS on stream 0")
        }
        var block = try Self.unpadded(frame)
        if frame.has(Flag.priority) {
            guard block.readableBytes >= 5 else {
                throw APNSHTTP2ProtocolError(.frameSizeError, "a malformed HEADERS priority")
            }
            block.moveReaderIndex(forwardBy: 5)
        }
        let endStream = frame.has(Flag.endStream)
        if frame.has(Flag.endHeaders) {
            try deliverHeaders(block, endStream: endStream, on: frame.streamID, context: context)
        } else {
            // Copied: the fragments that follow are appended to it.
            var copy = context.channel.allocator.buffer(capacity: block.readableBytes * 2)
            copy.writeBuffer(&block)
            partialHeaders = (frame.streamID, endStream, copy)
        }
    }

    private func deliverHeaders(
        _ block: ByteBuffer,
        endStream: Bool,
        on streamID: HTTP2StreamID,
        context: ChannelHandlerContext
    ) throws(APNSHTTP2ProtocolError) {
        let response: APNSResponse
        do {
            response = try decoder.decodeResponse(block)
        } catch {
            throw APNSHTTP2ProtocolError(.compressionError, "a header block HPACK could not decode (\(error))")
        }
        if endStream { failWaiting(windows.streamEnded(streamID)) }
        context.fireChannelRead(wrapInboundOut(.response(response, streamID: streamID, endStream: endStream)))
    }

    private func readSettings(
        _ frame: APNSHTTP2FrameReader.Frame,
        context: ChannelHandlerContext
    ) throws(APNSHTTP2ProtocolError) {
        guard frame.streamID == .rootStream else {
            throw APNSHTTP2ProtocolError(.protocolError, "SETTINGS on stream \(frame.streamID)")
        }
        if frame.has(Flag.ack) {
            guard frame.payload.readableBytes == 0 else {
                throw APNSHTTP2ProtocolError(.frameSizeError, "a SETTINGS ACK with a payload")
            }
            return
        }
        guard frame.payload.readableBytes % 6 == 0 else {
            throw APNSHTTP2ProtocolError(.frameSizeError, "SETTINGS of \(frame.payload.readableBytes) bytes")
        }
        var payload = frame.payload
        var settings: HTTP2Settings = []
        while let code = payload.readInteger(as: UInt16.self), let value = payload.readInteger(as: UInt32.self) {
            let parameter =
                Self.knownSettings.first { $0.code == code }?.parameter
                ?? HTTP2SettingsParameter(extensionSetting: Int(code))
            let value = Int(value)
            switch parameter {
            case .headerTableSize:
                // The encoder may use less than the server allows, never more (RFC 7541 §4.2).
                do {
                    repeatCache.tableSizeChanged()
                    try encoder.setDynamicTableSize(min(value, HPACKEncoder.defaultDynamicTableSize))
                } catch {
                    throw APNSHTTP2ProtocolError(.internalError, "the HPACK encoder refused a table size (\(error))")
                }
            case .initialWindowSize:
                try windows.initialStreamWindowChanged(to: value) { writeData($0, context: context) }
            case .maxFrameSize:
                guard (16_384...16_777_215).contains(value) else {
                    throw APNSHTTP2ProtocolError(.protocolError, "SETTINGS_MAX_FRAME_SIZE \(value)")
                }
                windows.maximumFrameLength = value
            default:
                break
            }
            settings.append(HTTP2Setting(parameter: parameter, value: value))
        }
        output.clear()
        writeFrameHeader(length: 0, type: FrameType.settings, flags: Flag.ack, streamID: .rootStream, to: &output)
        passOutput(context: context, promise: nil)
        context.flush()
        context.fireChannelRead(
            wrapInboundOut(.frame(HTTP2Frame(streamID: .rootStream, payload: .settings(.settings(settings)))))
        )
    }

    /// A DATA or HEADERS payload without its padding (§6.1).
    private static func unpadded(_ frame: APNSHTTP2FrameReader.Frame) throws(APNSHTTP2ProtocolError) -> ByteBuffer {
        guard frame.has(Flag.padded) else { return frame.payload }
        var payload = frame.payload
        guard let padLength = payload.readInteger(as: UInt8.self), Int(padLength) <= payload.readableBytes else {
            throw APNSHTTP2ProtocolError(.protocolError, "padding longer than its frame")
        }
        return payload.readSlice(length: payload.readableBytes - Int(padLength))!
    }

    private func connectionError(_ error: APNSHTTP2ProtocolError, context: ChannelHandlerContext) {
        failed = true
        output.clear()
        writeFrameHeader(length: 8, type: FrameType.goAway, flags: 0, streamID: .rootStream, to: &output)
        output.writeInteger(UInt32(0))
        output.writeInteger(UInt32(http2ErrorCode: error.code))
        passOutput(context: context, promise: nil)
        context.flush()
        context.fireErrorCaught(error)
        context.close(promise: nil)
    }

    // MARK: Writing

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let frame: HTTP2Frame
        switch unwrapOutboundIn(data) {
        case .frame(let written):
            frame = written
        case .deviceHeaders(let fields, let streamID, let endStream):
            windows.streamOpened(streamID)
            writeDeviceHeaders(fields, on: streamID, endStream: endStream, context: context, promise: promise)
            return
        }
        output.clear()
        switch frame.payload {
        case .headers(let headers):
            windows.streamOpened(frame.streamID)
            writeHeaders(headers, on: frame.streamID, context: context, promise: promise)
            return
        case .data(let data):
            guard case .byteBuffer(let bytes) = data.data else {
                promise?.fail(ChannelError.operationUnsupported)
                return
            }
            let accepted = windows.send(
                .init(streamID: frame.streamID, bytes: bytes, endStream: data.endStream, promise: promise)
            ) {
                writeData($0, context: context)
            }
            if !accepted { promise?.fail(ChannelError.ioOnClosedChannel) }
            return
        case .ping(let ping, let ack):
            writeFrameHeader(
                length: 8,
                type: FrameType.ping,
                flags: ack ? Flag.ack : 0,
                streamID: .rootStream,
                to: &output
            )
            output.writeInteger(ping.integer)
        case .windowUpdate(let increment):
            writeFrameHeader(length: 4, type: FrameType.windowUpdate, flags: 0, streamID: frame.streamID, to: &output)
            output.writeInteger(UInt32(increment))
        case .rstStream(let code):
            failWaiting(windows.streamEnded(frame.streamID))
            writeFrameHeader(length: 4, type: FrameType.rstStream, flags: 0, streamID: frame.streamID, to: &output)
            output.writeInteger(UInt32(http2ErrorCode: code))
        case .goAway(let lastStreamID, let code, let opaqueData):
            writeFrameHeader(
                length: 8 + (opaqueData?.readableBytes ?? 0),
                type: FrameType.goAway,
                flags: 0,
                streamID: .rootStream,
                to: &output
            )
            output.writeInteger(UInt32(Int32(lastStreamID)))
            output.writeInteger(UInt32(http2ErrorCode: code))
            if var opaqueData { output.writeBuffer(&opaqueData) }
        case .settings(.settings(let settings)):
            writeSettings(settings, to: &output)
        case .settings(.ack):
            writeFrameHeader(length: 0, type: FrameType.settings, flags: Flag.ack, streamID: .rootStream, to: &output)
        case .priority, .pushPromise, .alternativeService, .origin:
            promise?.fail(ChannelError.operationUnsupported)
            return
        }
        passOutput(context: context, promise: promise)
    }

    private func writeHeaders(
        _ headers: HTTP2Frame.FramePayload.Headers,
        on streamID: HTTP2StreamID,
        context: ChannelHandlerContext,
        promise: EventLoopPromise<Void>?
    ) {
        let headerStart = output.writerIndex
        output.writeRepeatingByte(0, count: APNSHTTP2FrameReader.headerLength)
        // Whatever the block, the table may have changed under a device push's cached fields.
        defer { repeatCache.tableChanged() }
        do {
            try encoder.encode(headers: headers.headers, to: &output)
        } catch {
            promise?.fail(error)
            return
        }
        writeHeaderFrames(
            from: headerStart,
            on: streamID,
            endStream: headers.endStream,
            context: context,
            promise: promise
        )
    }

    /// A device push's HEADERS: `:path` as a literal, the repeating fields as their bytes of last
    /// time if the table still makes them so (`APNSHPACKRepeatCache`) or else through the encoder,
    /// then `apns-id` as a literal.
    private func writeDeviceHeaders(
        _ fields: APNSDeviceHeaderFields,
        on streamID: HTTP2StreamID,
        endStream: Bool,
        context: ChannelHandlerContext,
        promise: EventLoopPromise<Void>?
    ) {
        output.clear()
        let headerStart = output.writerIndex
        output.writeRepeatingByte(0, count: APNSHTTP2FrameReader.headerLength)
        if repeatCache.sizeUpdatePending {
            // An empty header list: the encoder writes the size update alone, where it belongs.
            do {
                try encoder.encode(headers: HPACKHeaders(), to: &output)
            } catch {
                promise?.fail(error)
                return
            }
            repeatCache.tableChanged()
        }
        output.writeHPACKLiteralWithoutIndexing(nameIndex: Self.pathNameIndex, value: fields.path)
        if let bytes = repeatCache.bytes(for: fields.repeating) {
            output.writeImmutableBuffer(bytes)
        } else {
            let start = output.writerIndex
            do {
                try encoder.encode(headers: fields.repeating.headers, to: &output)
            } catch {
                repeatCache.tableChanged()
                promise?.fail(error)
                return
            }
            // A copy of its own: a slice would share `output`'s storage, which is written again at once.
            var bytes = context.channel.allocator.buffer(capacity: output.writerIndex - start)
            bytes.writeBytes(output.readableBytesView[start..<output.writerIndex])
            repeatCache.encoded(fields.repeating, as: bytes)
        }
        if let apnsID = fields.apnsID {
            output.writeHPACKLiteralWithoutIndexing(name: "apns-id", value: apnsID)
        }
        writeHeaderFrames(from: headerStart, on: streamID, endStream: endStream, context: context, promise: promise)
    }

    /// `:path` in HPACK's static table (RFC 7541 Appendix A).
    private static let pathNameIndex = 4

    /// Frames the header block written into `output` after a frame header's room at `headerStart`.
    private func writeHeaderFrames(
        from headerStart: Int,
        on streamID: HTTP2StreamID,
        endStream endsStream: Bool,
        context: ChannelHandlerContext,
        promise: EventLoopPromise<Void>?
    ) {
        let blockLength = output.writerIndex - headerStart - APNSHTTP2FrameReader.headerLength
        let endStream: UInt8 = endsStream ? Flag.endStream : 0
        if blockLength <= windows.maximumFrameLength {
            setFrameHeader(
                at: headerStart,
                length: blockLength,
                type: FrameType.headers,
                flags: endStream | Flag.endHeaders,
                streamID: streamID
            )
            passOutput(context: context, promise: promise)
            return
        }
        // A block larger than one frame: HEADERS, then CONTINUATION frames (§6.10).
        var block = output.getSlice(at: headerStart + APNSHTTP2FrameReader.headerLength, length: blockLength)!
        var framed = context.channel.allocator.buffer(
            capacity: blockLength + 9 * (blockLength / windows.maximumFrameLength + 1)
        )
        var type = FrameType.headers
        var flags = endStream
        while block.readableBytes > 0 {
            var fragment = block.readSlice(length: min(block.readableBytes, windows.maximumFrameLength))!
            if block.readableBytes == 0 { flags |= Flag.endHeaders }
            writeFrameHeader(length: fragment.readableBytes, type: type, flags: flags, streamID: streamID, to: &framed)
            framed.writeBuffer(&fragment)
            type = FrameType.continuation
            flags = 0
        }
        context.write(wrapOutboundOut(.byteBuffer(framed)), promise: promise)
    }

    private func writeData(_ data: APNSHTTP2SendWindows.Data, context: ChannelHandlerContext) {
        var bytes = data.bytes
        output.clear()
        writeFrameHeader(
            length: bytes.readableBytes,
            type: FrameType.data,
            flags: data.endStream ? Flag.endStream : 0,
            streamID: data.streamID,
            to: &output
        )
        output.writeBuffer(&bytes)
        passOutput(context: context, promise: data.promise)
    }

    private func writeSettings(_ settings: HTTP2Settings, to buffer: inout ByteBuffer) {
        let known = settings.compactMap { setting in
            Self.knownSettings.first { $0.parameter == setting.parameter }.map { ($0.code, setting.value) }
        }
        writeFrameHeader(
            length: 6 * known.count,
            type: FrameType.settings,
            flags: 0,
            streamID: .rootStream,
            to: &buffer
        )
        for (code, value) in known {
            buffer.writeInteger(code)
            buffer.writeInteger(UInt32(value))
        }
    }

    /// Hands the frame bytes in `output` to the handler below, which copies them; `output` is then
    /// uniquely held again and its storage reused by the next frame.
    private func passOutput(context: ChannelHandlerContext, promise: EventLoopPromise<Void>?) {
        context.write(wrapOutboundOut(.byteBuffer(output)), promise: promise)
    }

    private func failWaiting(_ data: [APNSHTTP2SendWindows.Data]) {
        for item in data { item.promise?.fail(ChannelError.ioOnClosedChannel) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        failWaiting(windows.removeAll())
        context.fireChannelInactive()
    }

    private func writeFrameHeader(
        length: Int,
        type: UInt8,
        flags: UInt8,
        streamID: HTTP2StreamID,
        to buffer: inout ByteBuffer
    ) {
        buffer.writeInteger(UInt8(truncatingIfNeeded: length >> 16))
        buffer.writeInteger(UInt16(truncatingIfNeeded: length))
        buffer.writeInteger(type)
        buffer.writeInteger(flags)
        buffer.writeInteger(UInt32(Int32(streamID)))
    }

    private func setFrameHeader(at index: Int, length: Int, type: UInt8, flags: UInt8, streamID: HTTP2StreamID) {
        output.setInteger(UInt8(truncatingIfNeeded: length >> 16), at: index)
        output.setInteger(UInt16(truncatingIfNeeded: length), at: index + 1)
        output.setInteger(type, at: index + 3)
        output.setInteger(flags, at: index + 4)
        output.setInteger(UInt32(Int32(streamID)), at: index + 5)
    }
}
