import NIOCore
import NIOHTTP2

/// Writes the emulator's GOAWAY frames below `NIOHTTP2Handler`, between it and TLS, so that
/// NIOHTTP2's connection state machine never learns of them.
///
/// Why: once a NIOHTTP2 server has sent GOAWAY it ignores the HEADERS of streams above the last
/// stream ID but then takes their DATA for a protocol error, a connection error after which it
/// reads nothing more. A client writes a burst's HEADERS ahead of its DATA (NIOHTTP2 buffers DATA
/// until the flush), so a GOAWAY in the middle of a burst always meets such streams, and the
/// connection would never answer the streams the GOAWAY promised to answer. APNs ignores what comes
/// above its GOAWAY; the frame handler does that itself (`APNSHTTP2FrameHandler`), with NIOHTTP2
/// still treating those streams as open until the connection closes.
final class GoAwayWriter: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var context: ChannelHandlerContext?

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    /// Writes and flushes a GOAWAY frame (RFC 9113 §6.8) on the connection.
    func writeGoAway(lastStreamID: HTTP2StreamID, errorCode: HTTP2ErrorCode, debugData: [UInt8]) {
        guard let context else { return }
        let length = 8 + debugData.count
        var frame = context.channel.allocator.buffer(capacity: 9 + length)
        // Frame header: 24-bit length, type 0x7 (GOAWAY), no flags, stream 0.
        frame.writeInteger(UInt8(truncatingIfNeeded: length >> 16))
        frame.writeInteger(UInt16(truncatingIfNeeded: length))
        frame.writeInteger(UInt8(0x7))
        frame.writeInteger(UInt8(0))
        frame.writeInteger(UInt32(0))
        frame.writeInteger(UInt32(Int32(lastStreamID)))
        frame.writeInteger(UInt32(errorCode.networkCode))
        frame.writeBytes(debugData)
        context.writeAndFlush(wrapOutboundOut(frame), promise: nil)
    }
}
