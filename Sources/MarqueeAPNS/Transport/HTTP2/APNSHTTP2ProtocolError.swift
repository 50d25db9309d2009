import NIOHTTP2

/// The server broke HTTP/2 (RFC 9113) in a way that ends the connection: the client sends GOAWAY
/// with `code` and closes, and what was in flight is decided as for any closed connection.
struct APNSHTTP2ProtocolError: Error, CustomStringConvertible {
    var code: HTTP2ErrorCode
    var detail: String

    init(_ code: HTTP2ErrorCode, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    var description: String { "HTTP/2 \(code): \(detail)" }
}
