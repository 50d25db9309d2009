import NIOHTTP2

/// What `APNSHTTP2Framer` hands up to `APNSConnectionHandler`: a frame, or a stream's answer, whose
/// header block the framer decoded into the fields the client reads (`APNSHPACKDecoder`).
enum APNSHTTP2Read {
    case frame(HTTP2Frame)
    case response(APNSResponse, streamID: HTTP2StreamID, endStream: Bool)
}
