import HTTPTypes
import Hummingbird
import NIOCore

/// Bounds what a request body may cost before any handler decodes it: its size (413, however the
/// body is framed) and, for JSON, how deep it nests (422), so that no input makes the server
/// allocate without limit or recurse deeply. Runs after authentication, and only for a route that
/// matched: no body is read for a request that will be refused anyway. A client that goes away
/// mid-body is its own outcome (`requestAbandoned`), not the server's failure.
struct BodyLimitMiddleware<Context: RequestContext>: RouterMiddleware {
    let maximumBytes: Int
    let maximumDepth: Int

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard request.method != .get, request.method != .head, request.method != .delete,
            // No route matched: the answer (404, 405) needs no body, so none is read.
            context.endpointPath != nil
        else {
            return try await next(request, context)
        }
        let announced = request.headers[.contentLength].flatMap(Int.init)
        if let length = announced, length > maximumBytes {
            throw Problem(
                .bodyTooLarge,
                detail: "the body has \(length) bytes; this server takes at most \(maximumBytes)"
            )
        }
        var request = request
        let buffer: ByteBuffer
        do {
            buffer = try await request.collectBody(upTo: maximumBytes)
        } catch is NIOTooManyBytesError {
            // A body without Content-Length (chunked) that grew past the limit.
            throw Problem(.bodyTooLarge, detail: "the body is larger than \(maximumBytes) bytes")
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            // The connection closed, was reset or timed out before the body's end.
            throw Problem(
                .requestAbandoned,
                detail: "the connection ended before the body did (\(Self.describe(error)))"
            )
        }
        if let length = announced, buffer.readableBytes < length {
            throw Problem(
                .requestAbandoned,
                detail: "the connection ended after \(buffer.readableBytes) of the body's \(length) bytes"
            )
        }
        if buffer.readableBytes > 0 {
            if let depth = JSONDepth.exceeds(maximumDepth, in: buffer.readableBytesView) {
                throw Problem(
                    .jsonTooDeep,
                    detail: "the body nests deeper than \(maximumDepth) levels (at byte \(depth))"
                )
            }
        }
        return try await next(request, context)
    }

    /// The error's type, for the log: never its text, which could quote the body.
    static func describe(_ error: any Error) -> String {
        String(describing: type(of: error))
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
