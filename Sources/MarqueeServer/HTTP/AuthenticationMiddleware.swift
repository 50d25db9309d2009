import Foundation
import HTTPTypes
import Hummingbird
import Logging
import MarqueeCore
import MarqueeEngine

/// Authenticates every `/v1` request by its `Authorization: Bearer mq_…` key and binds the key to
/// the request's scope; what the key may do is each operation's check.
struct AuthenticationMiddleware<Context: RequestContext>: RouterMiddleware {
    let apps: AppAdministration

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.uri.path.hasPrefix("/v1/") || request.uri.path == "/v1" else {
            return try await next(request, context)
        }
        guard let header = request.headers[.authorization], header.count > 7,
            header.prefix(7).lowercased() == "bearer "
        else {
            throw Problem(.unauthorized, detail: "send the API key as Authorization: Bearer mq_…")
        }
        let presented = header.dropFirst(7).trimmingCharacters(in: .whitespaces)
        guard let caller = try await apps.authenticate(presented) else {
            throw Problem(.unauthorized, detail: "the API key is unknown or revoked")
        }
        var scope = RequestScope.current ?? RequestScope(requestID: RequestIDMiddleware<Context>.makeID(), logger: .init(label: "marquee"), apiKey: nil)
        let key = caller.key
        scope.apiKey = key
        scope.app = caller.app
        scope.logger[metadataKey: "api_key.prefix"] = "\(key.prefix)"
        if let appID = key.appID { scope.logger[metadataKey: "app.id"] = "\(appID)" }
        return try await RequestScope.$current.withValue(scope) { try await next(request, context) }
    }
}
