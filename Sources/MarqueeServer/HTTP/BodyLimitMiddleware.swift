import HTTPTypes
import Hummingbird
import NIOCore

/// Bounds what a request body may cost before any handler decodes it: its size (413) and, for
/// JSON, how deep it nests (422), so that no input makes the server allocate without limit or
/// recurse deeply.
struct BodyLimitMiddleware<Context: RequestContext>: RouterMiddleware {
    let maximumBytes: Int
    let maximumDepth: Int

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.method != .get, request.method != .head, request.method != .delete else {
            return try await next(request, context)
        }
        if let length = request.headers[.contentLength].flatMap(Int.init), length > maximumBytes {
            throw Problem(.bodyTooLarge, detail: "the body has \(length) bytes; this server takes at most \(maximumBytes)")
        }
        var request = request
        let buffer: ByteBuffer
        do {
            buffer = try await request.collectBody(upTo: maximumBytes)
        } catch let error as HTTPError where error.status == .contentTooLarge {
            throw Problem(.bodyTooLarge, detail: "the body is larger than \(maximumBytes) bytes")
        }
        if buffer.readableBytes > 0 {
            if let depth = JSONDepth.exceeds(maximumDepth, in: buffer.readableBytesView) {
                throw Problem(.jsonTooDeep, detail: "the body nests deeper than \(maximumDepth) levels (at byte \(depth))")
            }
        }
        return try await next(request, context)
    }
}

/// A scan of JSON text for nesting depth that never recurses or allocates.
enum JSONDepth {
    /// The byte offset at which nesting passes `limit`, or `nil` if it never does.
    static func exceeds(_ limit: Int, in bytes: some Collection<UInt8>) -> Int? {
        var depth = 0
        var inString = false
        var escaped = false
        var offset = 0
        for byte in bytes {
            defer { offset += 1 }
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                if depth > limit { return offset }
            case UInt8(ascii: "}"), UInt8(ascii: "]"): depth -= 1
            default: break
            }
        }
        return nil
    }
}
