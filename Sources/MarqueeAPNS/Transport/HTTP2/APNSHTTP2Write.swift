import NIOHTTP2

/// What `APNSConnectionHandler` writes to `APNSHTTP2Framer`: a frame, or the HEADERS of a device
/// push, whose header block the framer puts together itself from the push's fields
/// (`APNSDeviceHeaderFields`), writing the fields that repeat from push to push as it wrote them
/// last time.
enum APNSHTTP2Write {
    case frame(HTTP2Frame)
    case deviceHeaders(APNSDeviceHeaderFields, streamID: HTTP2StreamID, endStream: Bool)
}
