import Crypto
import Foundation
import HTTPTypes
import Hummingbird

/// Who may read `/metrics`: everyone by default (operators scrape it from inside the network, as
/// they probe the health checks), nobody when `metrics.enabled` is false, and only
/// `Authorization: Bearer <metrics.bearerToken>` when a token is configured. The token is not an
/// API key: a scraper's credential should open nothing else.
struct MetricsAccessMiddleware<Context: RequestContext>: RouterMiddleware {
    let enabled: Bool
    /// SHA-256 of the token, compared in constant time.
    let tokenDigest: SHA256Digest?

    init(enabled: Bool, bearerToken: String?) {
        self.enabled = enabled
        tokenDigest = bearerToken.map { SHA256.hash(data: Array($0.utf8)) }
    }

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard request.uri.path == "/metrics" else { return try await next(request, context) }
        guard enabled else {
            throw Problem(.notFound, detail: "metrics are switched off on this server (metrics.enabled)")
        }
        if let tokenDigest {
            guard let credential = HTTPFieldText.bearerCredential(request.headers[.authorization]),
                SHA256.hash(data: Array(credential.utf8)) == tokenDigest
            else {
                throw Problem(
                    .unauthorized,
                    detail: "send the metrics token (metrics.bearerToken) as Authorization: Bearer …"
                )
            }
        }
        return try await next(request, context)
    }
}
