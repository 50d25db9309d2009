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
    static var link: HTTPField.Name { HTTPField.Name("Link")! }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let requestID = request.headers[.requestID].flatMap(Self.acceptable) ?? Self.makeID()
        var logger = logger
        logger[metadataKey: "request.id"] = "\(requestID)"
        let scope = RequestScope(requestID: requestID, logger: logger, apiKey: nil)
        let started = ContinuousClock.now
        var response: Response
        do {
            response = try await RequestScope.$current.withValue(scope) { try await next(request, context) }
        } catch {
            let problem = Problem(error)
            if problem.status >= 500 {
                logger.error(
                    "request failed",
                    metadata: ["error": "\(String(reflecting: error))", "http.path": "\(request.uri.path)"]
                )
            }
            response = problem.response(requestID: requestID)
        }
        response.headers[.requestID] = requestID
        // The OpenAPI runtime percent-encodes string headers (URI "simple" style); `Location` and
        // `Link` carry URI references that clients read as they are.
        for name in [HTTPField.Name.location, Self.link] {
            if let value = response.headers[name], value.contains("%"), let decoded = value.removingPercentEncoding {
                response.headers[name] = decoded
            }
        }
        logger.debug(
            "request",
            metadata: [
                "http.method": "\(request.method)", "http.path": "\(request.uri.path)",
                "http.status": "\(response.status.code)",
                "duration_ms": "\((ContinuousClock.now - started).wholeMilliseconds)",
            ]
        )
        return response
    }

    /// IDs a client sends are echoed only if they are short and printable (they go into logs).
    static func acceptable(_ value: String) -> String? {
        guard (1...128).contains(value.utf8.count),
            value.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") })
        else { return nil }
        return value
    }

    static func makeID() -> String {
        UUID().uuidString.lowercased()
    }
}

extension HTTPField.Name {
    static let requestID = HTTPField.Name("X-Request-ID")!
    static let idempotencyKey = HTTPField.Name("Idempotency-Key")!
    static let idempotentReplayed = HTTPField.Name("Idempotent-Replayed")!
}
