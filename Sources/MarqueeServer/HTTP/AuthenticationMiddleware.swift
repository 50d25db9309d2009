import Foundation
import HTTPTypes
import Hummingbird
import Logging
import MarqueeCore
import MarqueeEngine

/// Authenticates every `/v1` request by its `Authorization: Bearer mq_…` key and binds the key to
/// the request's scope; what the key may do is each operation's check. Runs before the body is
/// read: a request without a valid key is answered 401 on its headers alone, and its connection
/// closed (`Problem.closesConnection`). Failures are counted per client address, and an address
/// past `auth.throttle.failures` is answered 429 until its window ends (`AuthenticationThrottle`).
struct AuthenticationMiddleware<Context: RemoteAddressRequestContext>: RouterMiddleware {
    let apps: AppAdministration
    let failures: AuthenticationFailures

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard request.uri.path.hasPrefix("/v1/") || request.uri.path == "/v1" else {
            return try await next(request, context)
        }
        if let wait = failures.retryAfter(context.remoteAddress) {
            let seconds = max(1, Int((Double(wait.wholeMilliseconds) / 1000).rounded(.up)))
            throw Problem(
                .authenticationThrottled,
                detail: "too many failed authentications from this address; retry in \(seconds) s",
                retryAfter: seconds
            )
        }
        guard let credential = HTTPFieldText.bearerCredential(request.headers[.authorization]) else {
            failures.recordFailure(context.remoteAddress)
            throw Problem(.unauthorized, detail: "send the API key as Authorization: Bearer mq_…")
        }
        let presented = String(credential)
        guard let caller = try await apps.authenticate(presented) else {
            failures.recordFailure(context.remoteAddress)
            throw Problem(.unauthorized, detail: "the API key is unknown or revoked")
        }
        var scope =
            RequestScope.current
            ?? RequestScope(
                requestID: RequestIDMiddleware<Context>.makeID(),
                logger: .init(label: "marquee"),
                apiKey: nil
            )
        let key = caller.key
        scope.apiKey = key
        scope.app = caller.app
        scope.logger[metadataKey: "api_key.prefix"] = .string(key.prefix)
        // Formatted only if a line is written.
        if let appID = key.appID { scope.logger[metadataKey: "app.id"] = .stringConvertible(appID) }
        return try await RequestScope.$current.withValue(scope) { try await next(request, context) }
    }
}
