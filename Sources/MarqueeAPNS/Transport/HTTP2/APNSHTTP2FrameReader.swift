import NIOCore
import NIOHTTP2

/// Cuts the bytes a connection reads into HTTP/2 frames (RFC 9113 §4.1): a 9-byte header (24-bit
/// length, type, flags, 31-bit stream ID), then the payload. The payload is a slice of what was
/// read, never a copy. It knows nothing of what a frame means: that is `APNSHTTP2Framer`'s.
struct APNSHTTP2FrameReader {
    struct Frame {
        var type: UInt8
        var flags: UInt8
        var streamID: HTTP2StreamID
        var payload: ByteBuffer

        func has(_ flag: UInt8) -> Bool { flags & flag != 0 }
    }

    static let headerLength = 9

    /// The largest payload accepted: our SETTINGS_MAX_FRAME_SIZE, which the client leaves at
    /// HTTP/2's default.
    let maximumPayloadLength: Int
    private var unread: ByteBuffer?

    init(maximumPayloadLength: Int = 16_384) {
        self.maximumPayloadLength = maximumPayloadLength
    }

    /// Bytes read from the connection, after those given before.
    mutating func append(_ bytes: ByteBuffer) {
        if unread == nil || unread!.readableBytes == 0 {
            unread = bytes
        } else {
            var bytes = bytes
            unread!.writeBuffer(&bytes)
        }
    }

    /// The next whole frame, or `nil` until more bytes arrive. A frame longer than
    /// `maximumPayloadLength` is a connection error (FRAME_SIZE_ERROR, §4.2).
    mutating func nextFrame() throws(APNSHTTP2ProtocolError) -> Frame? {
        guard var bytes = unread, bytes.readableBytes >= Self.headerLength else { return nil }
        let start = bytes.readerIndex
        let lengthHigh = bytes.getInteger(at: start, as: UInt8.self)!
        let lengthLow = bytes.getInteger(at: start + 1, as: UInt16.self)!
        let length = Int(lengthHigh) << 16 | Int(lengthLow)
        guard length <= maximumPayloadLength else {
            throw APNSHTTP2ProtocolError(
                .frameSizeError,
                "a frame of \(length) bytes, above the \(maximumPayloadLength) allowed"
            )
        }
        guard bytes.readableBytes >= Self.headerLength + length else { return nil }
        let type = bytes.getInteger(at: start + 3, as: UInt8.self)!
        let flags = bytes.getInteger(at: start + 4, as: UInt8.self)!
        let streamID = bytes.getInteger(at: start + 5, as: UInt32.self)! & 0x7FFF_FFFF
        bytes.moveReaderIndex(forwardBy: Self.headerLength)
        let payload = bytes.readSlice(length: length)!
        unread = bytes.readableBytes == 0 ? nil : bytes
        return Frame(type: type, flags: flags, streamID: HTTP2StreamID(Int32(streamID)), payload: payload)
    }
}
