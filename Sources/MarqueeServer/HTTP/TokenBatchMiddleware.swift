import Foundation
import HTTPTypes
import Hummingbird
import Logging
import MarqueeAPI
import MarqueeCore
import MarqueeEngine
import NIOCore

/// Answers `POST /v1/push-to-start-tokens/batch` without the generated route: its body read into
/// registrations as the generated types read it (`PushToStartRegistration(batchItem:)`), registered
/// through the engine (`TokenRegistry.register(app:_:pointerPrefix:)`, all or none), answered as
/// the generated route answers. Foundation's decoding of a batch's thousand items into the
/// generated types cost as much as the rest of the request on the server, parse and schema check
/// included.
///
/// It sits after authentication, the contract check (roles, each token's pattern, the items'
/// types, enums and nulls, the batch's size) and `IdempotencyMiddleware` (which keeps its answer
/// like any other), so it answers only what the operation would. Anything the generated route
/// would read or answer otherwise goes on to `APIHandler.registerPushToStartTokens`: a key that is
/// not an app's own with the role, headers that are not plain JSON, and a body with a key the
/// schema does not list, without a required one, or with a value of another shape.
struct TokenBatchMiddleware<Context: RequestContext>: RouterMiddleware {
    let tokens: TokenRegistry

    static var template: String { "/v1/push-to-start-tokens/batch" }

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard let app = request.plainAppRequest(.post, to: Self.template, endpointPath: context.endpointPath) else {
            return try await next(request, context)
        }
        // Already collected, bounded and checked against the schema (BodyLimitMiddleware,
        // ContractMiddleware), which keeps nothing of its parse.
        var request = request
        let body = try await request.collectBody(upTo: .max)
        guard let registrations = Self.registrations(in: body) else { return try await next(request, context) }
        let registered = try await tokens.register(app: app, registrations, pointerPrefix: "/tokens")
        RequestScope.current?.logger.trace("tokens registered without the generated route")
        return .generatedRouteJSON(
            try JSONAnswerStyle.generatedRouteEncoder().encode(
                Components.Schemas.PushToStartTokenBatchResult(registered: registered)
            )
        )
    }

    /// The registrations of a batch's body, in its order; nil for a body the generated route
    /// would read otherwise or refuse.
    static func registrations(in body: ByteBuffer) -> [PushToStartRegistration]? {
        guard let value = JSONParser.value(of: body),
            case .object(let batch) = value, batch.keys == ["tokens"],
            case .array(let items) = batch["tokens"]
        else { return nil }
        var registrations: [PushToStartRegistration] = []
        registrations.reserveCapacity(items.count)
        for item in items {
            guard case .object(let object) = item, let registration = PushToStartRegistration(batchItem: object)
            else { return nil }
            registrations.append(registration)
        }
        return registrations
    }
}
