import Foundation
import HTTPTypes
import Hummingbird
import Logging
import MarqueeCore

/// The outermost middleware: gives every request an ID (`X-Request-ID` as sent, when it is a
/// sensible one), puts it on every log line and every answer, and turns every error into a problem
/// document, logging what the answer leaves out.
struct RequestIDMiddleware<Context: RequestContext>: RouterMiddleware {
    let logger: Logger

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let requestID = Self.requestID(of: request.headers)
        var logger = logger
        logger[metadataKey: "request.id"] = .string(requestID)
        let scope = RequestScope(requestID: requestID, logger: logger, apiKey: nil)
        let started = ContinuousClock.now
        // Tokens in paths (`/v1/push-to-start-tokens/{token}`) are shortened in every log line;
        // only a line that is written pays for it.
        func path() -> String { PushTokenRedaction.redactingTokens(inPath: request.uri.path) }
        var response: Response
        do {
            response = try await RequestScope.$current.withValue(scope) { try await next(request, context) }
        } catch {
            response = Self.problem(answering: error, logger: logger, path: path()).response(requestID: requestID)
        }
        if Self.unmatched(context), request.headers.announcesBody {
            // No route read the body: the connection closes rather than read it to its end.
            response.headers[.connection] = "close"
        }
        response.headers[.requestID] = requestID
        // The OpenAPI runtime percent-encodes string headers (URI "simple" style); `Location` and
        // `Link` carry URI references that clients read as they are.
        for name in HTTPField.Name.uriReferences {
            if let value = response.headers[name], value.contains("%"), let decoded = value.removingPercentEncoding {
                response.headers[name] = decoded
            }
        }
        logger.debug(
            "request",
            metadata: [
                "http.method": "\(request.method)", "http.path": "\(path())",
                "http.status": "\(response.status.code)",
                "duration_ms": "\((ContinuousClock.now - started).wholeMilliseconds)",
            ]
        )
        return response
    }

    /// The problem document that answers `error`, logging what the answer leaves out: a server
    /// failure as an error, a request its client abandoned at debug. `path` has its tokens shortened.
    static func problem(answering error: any Error, logger: Logger, path: @autoclosure () -> String) -> Problem {
        let problem = Problem(error)
        if problem.type == ProblemKind.requestAbandoned.type {
            // The client's doing, and nobody reads the answer: not the server's failure.
            logger.debug(
                "request abandoned by the client",
                metadata: ["detail": "\(problem.detail ?? "")", "http.path": "\(path())"]
            )
        } else if problem.status >= 500 {
            logger.error(
                "request failed",
                metadata: ["error": "\(String(reflecting: error))", "http.path": "\(path())"]
            )
        }
        return problem
    }

    /// Whether no route matched the request (the router answers 404 or 405 itself).
    static func unmatched(_ context: Context) -> Bool {
        context.endpointPath == nil || context.endpointPath == "NotFound"
    }

    /// IDs a client sends are echoed only if they are short and printable (they go into logs).
    static func acceptable(_ value: String) -> String? {
        guard (1...128).contains(value.utf8.count),
            value.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") })
        else { return nil }
        return value
    }

    /// The request's ID: the one it sent when that is acceptable, otherwise a new one.
    static func requestID(of headers: HTTPFields) -> String {
        headers[.requestID].flatMap(acceptable) ?? makeID()
    }

    static func makeID() -> String {
        UUID.random().lowercasedText
    }
}

extension HTTPField.Name {
    static let requestID = HTTPField.Name("X-Request-ID")!
    static let idempotencyKey = HTTPField.Name("Idempotency-Key")!
    static let idempotentReplayed = HTTPField.Name("Idempotent-Replayed")!
    static let link = HTTPField.Name("Link")!
    /// Headers whose values are URI references (`RequestIDMiddleware` undoes the runtime's
    /// percent-encoding of them).
    static let uriReferences: [HTTPField.Name] = [.location, .link]
}
