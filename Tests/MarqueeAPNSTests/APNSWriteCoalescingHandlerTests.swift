import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import Testing

@testable import MarqueeAPNS

@Suite("Write coalescing below HTTP/2")
struct APNSWriteCoalescingHandlerTests {
    private func buffer(_ text: String) -> IOData {
        .byteBuffer(ByteBuffer(string: text))
    }

    /// Everything the channel has written so far, one element per write that reached the socket.
    private func outbound(_ channel: EmbeddedChannel) throws -> [String] {
        var written: [String] = []
        while let data = try channel.readOutbound(as: IOData.self) {
            guard case .byteBuffer(let bytes) = data else { continue }
            written.append(String(buffer: bytes))
        }
        return written
    }

    @Test("the writes between two flushes leave as one buffer, in order, and every promise succeeds")
    func writesBetweenFlushesBecomeOne() throws {
        let channel = EmbeddedChannel(handler: APNSWriteCoalescingHandler())
        let promises = (0..<3).map { _ in channel.eventLoop.makePromise(of: Void.self) }
        channel.write(buffer("HEADERS|"), promise: promises[0])
        channel.write(buffer("DATA-HEADER|"), promise: nil)
        channel.write(buffer("BODY"), promise: promises[1])
        #expect(try outbound(channel).isEmpty)

        channel.flush()
        #expect(try outbound(channel) == ["HEADERS|DATA-HEADER|BODY"])

        channel.write(buffer("NEXT"), promise: promises[2])
        channel.flush()
        #expect(try outbound(channel) == ["NEXT"])
        for promise in promises { try promise.futureResult.wait() }
        _ = try channel.finish()
    }

    @Test("a flush with nothing gathered still reaches the handlers below")
    func emptyFlushPassesThrough() throws {
        let channel = EmbeddedChannel(handler: APNSWriteCoalescingHandler())
        channel.flush()
        #expect(try outbound(channel).isEmpty)
        _ = try channel.finish()
    }

    @Test(
        """
        an empty write's promise still completes at the flush (NIOHTTP2 writes an empty DATA body with its \
        frame's promise)
        """
    )
    func emptyWriteCompletes() throws {
        let channel = EmbeddedChannel(handler: APNSWriteCoalescingHandler())
        let promise = channel.eventLoop.makePromise(of: Void.self)
        let completed = NIOLockedValueBox(false)
        promise.futureResult.whenSuccess { completed.withLockedValue { $0 = true } }
        channel.write(buffer(""), promise: promise)
        channel.flush()
        #expect(completed.withLockedValue { $0 })
        _ = try channel.finish()
    }

    @Test("past the threshold, the gathered bytes go down unflushed and a new buffer begins")
    func longRunsArePassedOn() throws {
        let channel = EmbeddedChannel(handler: APNSWriteCoalescingHandler())
        let chunk = String(repeating: "x", count: 1024)
        let writes = APNSWriteCoalescingHandler.passOnThreshold / 1024 + 1
        for _ in 0..<writes { channel.write(buffer(chunk), promise: nil) }
        channel.flush()
        let written = try outbound(channel)
        #expect(written.count == 2)
        #expect(written.map(\.count) == [APNSWriteCoalescingHandler.passOnThreshold, 1024])
        _ = try channel.finish()
    }

    @Test("writes still gathered when the channel closes go down before the close, so they end as unflushed writes do")
    func gatheredWritesPrecedeTheClose() throws {
        let recorder = OutboundRecorder()
        let channel = EmbeddedChannel(handlers: [recorder, APNSWriteCoalescingHandler()])
        channel.write(buffer("one"), promise: nil)
        channel.write(buffer("two"), promise: nil)
        try channel.close().wait()
        #expect(recorder.events == ["write onetwo", "close"])
    }
}

/// Records the outbound events that reach it, then passes them on.
private final class OutboundRecorder: ChannelOutboundHandler {
    typealias OutboundIn = IOData
    private(set) var events: [String] = []

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .byteBuffer(let bytes) = unwrapOutboundIn(data) { events.append("write \(String(buffer: bytes))") }
        context.write(data, promise: promise)
    }

    func flush(context: ChannelHandlerContext) {
        events.append("flush")
        context.flush()
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        events.append("close")
        context.close(mode: mode, promise: promise)
    }
}
