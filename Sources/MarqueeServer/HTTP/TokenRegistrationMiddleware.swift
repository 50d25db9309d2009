import Foundation
import HTTPTypes
import Hummingbird
import Logging
import MarqueeAPI
import MarqueeCore
import MarqueeEngine
import NIOCore

/// Answers `PUT /v1/push-to-start-tokens/{token}`, the registration every device's app makes at
/// kick-off, without the generated route: its body parsed (again: the contract check parsed and
/// checked it, and keeps nothing) and read as the generated type reads it, the registration through the engine (`TokenRegistry.register`, where
/// single registrations share statements), the answer written as the generated route writes it.
/// The generated route's own decoding and encoding cost more than the rest of the request.
///
/// It sits after authentication and the contract check (roles, the token's pattern, the body's
/// types, enums and nulls), so it answers only what the operation would. Anything the generated
/// route would read or answer otherwise goes on to `APIHandler.registerPushToStartToken`, which
/// answers the same way with the generated types: a key that is not an app's own with the role,
/// headers that are not plain JSON, a token with `%`, and a body with a key the schema does not
/// list, without a required one, or with a value of another shape.
struct TokenRegistrationMiddleware<Context: RequestContext>: RouterMiddleware {
    let tokens: TokenRegistry

    static var template: String { "/v1/push-to-start-tokens/{token}" }

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard let app = request.plainAppRequest(.put, to: Self.template, endpointPath: context.endpointPath),
            let token = Self.token(inPath: request.uri.path)
        else {
            return try await next(request, context)
        }
        // Already collected, bounded and checked against the schema (BodyLimitMiddleware,
        // ContractMiddleware): the buffer is at hand, the parse is of a hundred bytes.
        var request = request
        let body = try await request.collectBody(upTo: .max)
        guard
            let value = JSONParser.value(of: body),
            case .object(let object) = value,
            let registration = PushToStartRegistration(requestBody: object, token: token)
        else {
            return try await next(request, context)
        }
        let registered = try await tokens.register(app: app, registration)
        RequestScope.current?.logger.trace("token registered without the generated route")
        return .generatedRouteJSON(try PushToStartTokenAnswer.json(registered))
    }

    /// The path's token, when it needs no percent-decoding (a token is hex).
    static func token(inPath path: String) -> String? {
        let prefix = "/v1/push-to-start-tokens/"
        guard path.utf8.starts(with: prefix.utf8) else { return nil }
        let token = path.utf8.dropFirst(prefix.utf8.count)
        guard !token.isEmpty, !token.contains(UInt8(ascii: "/")), !token.contains(UInt8(ascii: "%")) else { return nil }
        return String(Substring(token))
    }
}
