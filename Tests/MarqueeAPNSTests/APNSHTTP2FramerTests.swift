import NIOCore
import NIOEmbedded
import NIOHPACK
import NIOHTTP2
import Testing

@testable import MarqueeAPNS

/// The client's HTTP/2 framing, byte for byte, on an embedded channel: what it writes for each
/// frame, what it makes of the server's, and where it ends the connection. The same client against
/// real servers (the emulator, the scripted server) is tested in the client's other suites.
@Suite("HTTP/2 framing of an APNs connection")
struct APNSHTTP2FramerTests {
    static let settings: HTTP2Settings = [
        HTTP2Setting(parameter: .maxConcurrentStreams, value: 100),
        HTTP2Setting(parameter: .initialWindowSize, value: 1 << 20),
        HTTP2Setting(parameter: .enablePush, value: 0),
    ]

    /// A channel with the framer, active, the client's preface and SETTINGS already read off.
    private func activeChannel() throws -> EmbeddedChannel {
        let channel = EmbeddedChannel(handler: APNSHTTP2Framer(localSettings: Self.settings))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 443)).wait()
        _ = try written(channel)
        return channel
    }

    /// One frame as a server writes it.
    private func frame(_ type: UInt8, flags: UInt8 = 0, stream: Int32 = 0, _ payload: [UInt8] = []) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.writeInteger(UInt8(payload.count >> 16))
        buffer.writeInteger(UInt16(truncatingIfNeeded: payload.count))
        buffer.writeInteger(type)
        buffer.writeInteger(flags)
        buffer.writeInteger(UInt32(stream))
        buffer.writeBytes(payload)
        return buffer
    }

    /// Everything written so far, as one buffer.
    private func written(_ channel: EmbeddedChannel) throws -> ByteBuffer {
        var all = ByteBuffer()
        while let data = try channel.readOutbound(as: IOData.self) {
            if case .byteBuffer(var bytes) = data { all.writeBuffer(&bytes) }
        }
        return all
    }

    /// The frames in `bytes`, as the framer's own reader cuts them.
    private func frames(in bytes: ByteBuffer) throws -> [APNSHTTP2FrameReader.Frame] {
        var reader = APNSHTTP2FrameReader()
        reader.append(bytes)
        var frames: [APNSHTTP2FrameReader.Frame] = []
        while let frame = try reader.nextFrame() { frames.append(frame) }
        return frames
    }

    private func inbound(_ channel: EmbeddedChannel) throws -> [APNSHTTP2Read] {
        var reads: [APNSHTTP2Read] = []
        while let read = try channel.readInbound(as: APNSHTTP2Read.self) { reads.append(read) }
        return reads
    }

    private func headerBlock(_ headers: [(String, String)]) throws -> [UInt8] {
        var encoder = HPACKEncoder(allocator: ByteBufferAllocator())
        var block = ByteBuffer()
        try encoder.encode(headers: HPACKHeaders(headers), to: &block)
        return Array(block.readableBytesView)
    }

    @Test("an active connection begins with the preface and the client's SETTINGS")
    func prefaceAndSettings() throws {
        let channel = EmbeddedChannel(handler: APNSHTTP2Framer(localSettings: Self.settings))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 443)).wait()
        var bytes = try written(channel)
        #expect(bytes.readString(length: 24) == "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
        let settings = try #require(try frames(in: bytes).first)
        #expect(settings.type == 0x4 && settings.flags == 0 && settings.streamID == .rootStream)
        var payload = settings.payload
        var pairs: [(UInt16, UInt32)] = []
        while let code = payload.readInteger(as: UInt16.self), let value = payload.readInteger(as: UInt32.self) {
            pairs.append((code, value))
        }
        #expect(pairs.map(\.0) == [3, 4, 2])
        #expect(pairs.map(\.1) == [100, 1 << 20, 0])
        _ = try channel.finish()
    }

    @Test("the server's SETTINGS are acknowledged at once and passed up; its ACK of ours is not passed up")
    func settingsAcknowledged() throws {
        let channel = try activeChannel()
        try channel.writeInbound(frame(0x4, [0, 3, 0, 0, 3, 0xE8]))
        let ack = try frames(in: written(channel))
        #expect(ack.count == 1 && ack[0].type == 0x4 && ack[0].flags == 0x1 && ack[0].payload.readableBytes == 0)
        let up = try inbound(channel)
        guard case .settings(.settings(let settings)) = up.first?.frame?.payload else {
            Issue.record("expected SETTINGS, got \(up)")
            return
        }
        #expect(settings.count == 1 && settings[0].parameter == .maxConcurrentStreams && settings[0].value == 1000)

        try channel.writeInbound(frame(0x4, flags: 0x1))
        #expect(try inbound(channel).isEmpty)
        _ = try channel.finish()
    }

    @Test("a PING is answered with its own data; the answer to the client's PING goes up")
    func pings() throws {
        let channel = try activeChannel()
        try channel.writeInbound(frame(0x6, [1, 2, 3, 4, 5, 6, 7, 8]))
        let answer = try #require(try frames(in: written(channel)).first)
        #expect(
            answer.type == 0x6 && answer.flags == 0x1
                && Array(answer.payload.readableBytesView) == [1, 2, 3, 4, 5, 6, 7, 8]
        )
        #expect(try inbound(channel).isEmpty)

        try channel.writeInbound(frame(0x6, flags: 0x1, [0, 0, 0, 0, 0, 0, 0, 9]))
        guard case .ping(let data, ack: true) = try inbound(channel).first?.frame?.payload else {
            Issue.record("expected a PING ACK")
            return
        }
        #expect(data.integer == 9)
        _ = try channel.finish()
    }

    @Test("a request's HEADERS are one frame whose block decodes back to its headers; its DATA follows with END_STREAM")
    func requestFrames() throws {
        let channel = try activeChannel()
        let headers = HPACKHeaders([
            (":method", "POST"), (":path", "/3/device/abcdef"), ("apns-push-type", "liveactivity"),
        ])
        channel.write(
            APNSHTTP2Write.frame(HTTP2Frame(streamID: 1, payload: .headers(.init(headers: headers, endStream: false)))),
            promise: nil
        )
        channel.write(
            APNSHTTP2Write.frame(
                HTTP2Frame(
                    streamID: 1,
                    payload: .data(.init(data: .byteBuffer(ByteBuffer(string: "{}")), endStream: true))
                )
            ),
            promise: nil
        )
        channel.flush()
        let sent = try frames(in: written(channel))
        #expect(sent.map(\.type) == [0x1, 0x0])
        #expect(sent[0].flags == 0x4 && sent[0].streamID == 1)
        var block = sent[0].payload
        var decoder = HPACKDecoder(allocator: ByteBufferAllocator())
        #expect(try decoder.decodeHeaders(from: &block) == headers)
        #expect(sent[1].flags == 0x1 && String(buffer: sent[1].payload) == "{}")
        _ = try channel.finish()
    }

    @Test("an answer's header block split over CONTINUATION, with padding and priority, goes up as one answer")
    func continuationAndPadding() throws {
        let channel = try activeChannel()
        let block = try headerBlock([(":status", "200"), ("apns-id", "2e6b3a3c-0f0e-4c5e-9d4a-1f2a3b4c5d6e")])
        // PADDED and PRIORITY: pad length 2, then 5 bytes of priority, the first fragment, the padding.
        let first = [2] + [0, 0, 0, 0, 16] + Array(block[..<4]) + [0, 0]
        try channel.writeInbound(frame(0x1, flags: 0x8 | 0x20 | 0x1, stream: 1, first))
        #expect(try inbound(channel).isEmpty)
        try channel.writeInbound(frame(0x9, stream: 1, Array(block[4...])).withFlags(0x4))
        let up = try inbound(channel)
        guard case .response(let response, let streamID, let endStream) = up.first else {
            Issue.record("expected an answer, got \(up)")
            return
        }
        #expect(streamID == 1 && endStream)
        #expect(response.status == 200)
        #expect(response.apnsID == "2e6b3a3c-0f0e-4c5e-9d4a-1f2a3b4c5d6e")
        _ = try channel.finish()
    }

    @Test("bytes that arrive a few at a time make the same frames")
    func partialReads() throws {
        let channel = try activeChannel()
        var bytes = frame(0x6, flags: 0x1, [0, 0, 0, 0, 0, 0, 0, 7])
        while let piece = bytes.readSlice(length: min(3, bytes.readableBytes)), piece.readableBytes > 0 {
            try channel.writeInbound(piece)
        }
        let up = try inbound(channel)
        #expect(up.count == 1)
        _ = try channel.finish()
    }

    @Test("DATA beyond the server's window waits for its WINDOW_UPDATE and then goes, in order")
    func flowControl() throws {
        let channel = try activeChannel()
        // The server allows 10 bytes per stream.
        try channel.writeInbound(frame(0x4, [0, 4, 0, 0, 0, 10]))
        _ = try written(channel)
        _ = try inbound(channel)
        let body = ByteBuffer(string: String(repeating: "x", count: 25))
        let sentPromise = channel.eventLoop.makePromise(of: Void.self)
        channel.write(
            APNSHTTP2Write.frame(
                HTTP2Frame(streamID: 1, payload: .headers(.init(headers: [":method": "POST"], endStream: false)))
            ),
            promise: nil
        )
        channel.write(
            APNSHTTP2Write.frame(
                HTTP2Frame(streamID: 1, payload: .data(.init(data: .byteBuffer(body), endStream: true)))
            ),
            promise: sentPromise
        )
        channel.flush()
        var sent = try frames(in: written(channel))
        #expect(sent.map(\.type) == [0x1, 0x0])
        #expect(sent[1].payload.readableBytes == 10 && sent[1].flags == 0)

        try channel.writeInbound(frame(0x8, stream: 1, [0, 0, 0, 20]))
        sent = try frames(in: written(channel))
        #expect(sent.count == 1 && sent[0].payload.readableBytes == 15 && sent[0].flags == 0x1)
        try sentPromise.futureResult.wait()
        _ = try channel.finish()
    }

    @Test("DATA still waiting when the server ends its stream is dropped and its promise failed")
    func waitingDataDropped() throws {
        let channel = try activeChannel()
        try channel.writeInbound(frame(0x4, [0, 4, 0, 0, 0, 0]))
        _ = try written(channel)
        _ = try inbound(channel)
        let promise = channel.eventLoop.makePromise(of: Void.self)
        channel.write(
            APNSHTTP2Write.frame(
                HTTP2Frame(streamID: 1, payload: .headers(.init(headers: [":method": "POST"], endStream: false)))
            ),
            promise: nil
        )
        channel.write(
            APNSHTTP2Write.frame(
                HTTP2Frame(
                    streamID: 1,
                    payload: .data(.init(data: .byteBuffer(ByteBuffer(string: "{}")), endStream: true))
                )
            ),
            promise: promise
        )
        channel.flush()
        #expect(try frames(in: written(channel)).map(\.type) == [0x1])

        try channel.writeInbound(frame(0x3, stream: 1, [0, 0, 0, 7]))
        guard case .rstStream(let code) = try inbound(channel).first?.frame?.payload else {
            Issue.record("expected RST_STREAM to go up")
            return
        }
        #expect(code == .refusedStream)
        #expect(throws: ChannelError.ioOnClosedChannel) { try promise.futureResult.wait() }
        _ = try channel.finish()
    }

    @Test("GOAWAY goes up with its last stream ID, code and debug data")
    func goAway() throws {
        let channel = try activeChannel()
        let debug = Array(#"{"reason":"Shutdown"}"#.utf8)
        try channel.writeInbound(frame(0x7, [0, 0, 0, 5, 0, 0, 0, 0] + debug))
        guard case .goAway(let last, let code, let data) = try inbound(channel).first?.frame?.payload else {
            Issue.record("expected GOAWAY")
            return
        }
        #expect(last == 5 && code == .noError && data.map { String(buffer: $0) } == #"{"reason":"Shutdown"}"#)
        _ = try channel.finish()
    }

    @Test(
        "a frame above the allowed size, a PUSH_PROMISE or a header block left unfinished sends GOAWAY and closes",
        arguments: [0, 1, 2]
    )
    func connectionErrors(_ which: Int) throws {
        let channel = try activeChannel()
        let bad: ByteBuffer
        let code: HTTP2ErrorCode
        switch which {
        case 0:
            bad = frame(0x0, stream: 1, [UInt8](repeating: 0, count: 16_385))
            code = .frameSizeError
        case 1:
            bad = frame(0x5, flags: 0x4, stream: 1, [0, 0, 0, 2, 0x82])
            code = .protocolError
        default:
            var both = frame(0x1, stream: 1, [0x88])
            var next = frame(0x6, [0, 0, 0, 0, 0, 0, 0, 0])
            both.writeBuffer(&next)
            bad = both
            code = .protocolError
        }
        #expect(throws: APNSHTTP2ProtocolError.self) { try channel.writeInbound(bad) }
        let goAway = try #require(try frames(in: written(channel)).last)
        #expect(goAway.type == 0x7)
        #expect(
            goAway.payload.getInteger(at: goAway.payload.readerIndex + 4, as: UInt32.self)
                == UInt32(http2ErrorCode: code)
        )
        #expect(!channel.isActive)
        _ = try? channel.finish()
    }

    private static func deviceFields(
        token: String,
        apnsID: String? = "0b5c8d2e-6f1a-4c3b-9d7e-2a4f6b8c0d1e",
        authorization: String = "bearer ey.first"
    ) -> APNSDeviceHeaderFields {
        APNSDeviceHeaderFields(
            path: "/3/device/" + token,
            repeating: .init(
                scheme: "https",
                authority: "api.push.apple.com",
                authorization: authorization,
                pushType: "liveactivity",
                topic: "com.example.match.push-type.liveactivity",
                priority: "10",
                expiration: "1800000000",
                collapseID: "start-5f0c"
            ),
            apnsID: apnsID
        )
    }

    /// Writes a device push's HEADERS and returns its header block.
    private func deviceBlock(
        _ fields: APNSDeviceHeaderFields,
        stream: HTTP2StreamID,
        on channel: EmbeddedChannel
    ) throws
        -> ByteBuffer
    {
        channel.write(APNSHTTP2Write.deviceHeaders(fields, streamID: stream, endStream: true), promise: nil)
        channel.flush()
        let sent = try frames(in: written(channel))
        try #require(sent.count == 1)
        #expect(sent[0].type == 0x1 && sent[0].flags == 0x1 | 0x4 && sent[0].streamID == stream)
        return sent[0].payload
    }

    @Test(
        "a device push's header block decodes to its fields, :path first; from the third push on, the repeating ones are one-byte references"
    )
    func deviceHeaderBlocks() throws {
        let channel = try activeChannel()
        var decoder = HPACKDecoder(allocator: ByteBufferAllocator())
        var repeatingLengths: [Int] = []
        for index in 0..<4 {
            let fields = Self.deviceFields(token: String(repeating: "a\(index)", count: 40))
            var block = try deviceBlock(fields, stream: HTTP2StreamID(1 + 2 * index), on: channel)
            let length = block.readableBytes
            #expect(try decoder.decodeHeaders(from: &block) == fields.headers)
            // :path: one byte of name index, one of length; apns-id: one, 1 + 7, 1 + 36.
            repeatingLengths.append(length - (2 + fields.path.utf8.count) - (1 + 8 + 37))
        }
        // The first push adds its fields to the table, the second refers to them, and the third and
        // fourth are the second's bytes: ten fields, ten one-byte references.
        #expect(repeatingLengths[0] > 100)
        #expect(Array(repeatingLengths.dropFirst()) == [10, 10, 10])
        _ = try channel.finish()
    }

    @Test(
        "device pushes decode to their fields across another request's block, a new token and table sizes the server changes"
    )
    func deviceHeaderBlocksAcrossTableChanges() throws {
        let channel = try activeChannel()
        var decoder = HPACKDecoder(allocator: ByteBufferAllocator())
        var stream: HTTP2StreamID = 1
        func push(_ fields: APNSDeviceHeaderFields) throws {
            var block = try deviceBlock(fields, stream: stream, on: channel)
            #expect(try decoder.decodeHeaders(from: &block) == fields.headers)
            stream = HTTP2StreamID(Int32(stream) + 2)
        }
        for token in ["01", "02", "03"] { try push(Self.deviceFields(token: token)) }

        // A broadcast's block adds its own fields: the cached bytes' indices are no longer right.
        let broadcast = HPACKHeaders([
            (":method", "POST"), (":scheme", "https"), (":authority", "api.push.apple.com"),
            (":path", "/4/broadcasts/apps/com.example.match"), ("apns-channel-id", "dHN0LTEyMzQ="),
        ])
        channel.write(
            APNSHTTP2Write.frame(
                HTTP2Frame(streamID: stream, payload: .headers(.init(headers: broadcast, endStream: true)))
            ),
            promise: nil
        )
        channel.flush()
        var broadcastBlock = try #require(try frames(in: written(channel)).first).payload
        #expect(try decoder.decodeHeaders(from: &broadcastBlock) == broadcast)
        stream = HTTP2StreamID(Int32(stream) + 2)
        for token in ["04", "05", "06"] { try push(Self.deviceFields(token: token)) }

        // A refreshed provider token, and a push without an apns-id.
        for token in ["07", "08", "09"] { try push(Self.deviceFields(token: token, authorization: "bearer ey.second")) }
        try push(Self.deviceFields(token: "0a", apnsID: nil, authorization: "bearer ey.second"))

        // The server shrinks the table to nothing, then allows it again.
        for size: UInt8 in [0, 0x10] {
            try channel.writeInbound(frame(0x4, [0, 1, 0, 0, size, 0]))
            _ = try written(channel)
            _ = try inbound(channel)
            for token in ["0b", "0c", "0d"] { try push(Self.deviceFields(token: token)) }
        }
        _ = try channel.finish()
    }

    @Test("frames of a type HTTP/2 does not define are ignored")
    func unknownFrames() throws {
        let channel = try activeChannel()
        try channel.writeInbound(frame(0xBB, stream: 3, [1, 2, 3]))
        #expect(try inbound(channel).isEmpty)
        #expect(channel.isActive)
        _ = try channel.finish()
    }
}

extension ByteBuffer {
    /// The same frame with other flags (the flags byte is the fifth).
    fileprivate func withFlags(_ flags: UInt8) -> ByteBuffer {
        var copy = self
        copy.setInteger(flags, at: readerIndex + 4)
        return copy
    }
}

extension APNSHTTP2Read {
    fileprivate var frame: HTTP2Frame? {
        if case .frame(let frame) = self { return frame }
        return nil
    }
}
