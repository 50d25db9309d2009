import Foundation
import HTTPTypes
import NIOCore
import OpenAPIRuntime

/// Wraps the real transport so that every failure to get an answer (refused, unresolvable,
/// timed out, broken mid-request) reaches the caller as `MarqueeClientError.unreachable`, told
/// apart from answers the server gave.
struct ReachabilityTransport: ClientTransport {
    let upstream: any ClientTransport

    func send(
        _ request: HTTPRequest,
        body: HTTPBody?,
        baseURL: URL,
        operationID: String
    ) async throws -> (HTTPResponse, HTTPBody?) {
        do {
            return try await upstream.send(request, body: body, baseURL: baseURL, operationID: operationID)
        } catch let error as CancellationError {
            throw error
        } catch {
            throw MarqueeClientError(
                kind: .unreachable,
                title: "cannot reach the server at \(Self.origin(baseURL))",
                detail: Self.reason(error),
                requestID: request.headerFields[.requestID]
            )
        }
    }

    /// The system's words for a socket error ("Connection refused"), else the error as it
    /// describes itself.
    static func reason(_ error: any Error) -> String {
        if let error = error as? IOError { return String(cString: strerror(error.errnoCode)) }
        return String(describing: error)
    }

    /// Scheme, host and port: where the request went, without a path that might carry anything.
    static func origin(_ url: URL) -> String {
        var components = URLComponents()
        components.scheme = url.scheme
        components.host = url.host
        components.port = url.port
        return components.string ?? url.absoluteString
    }
}
