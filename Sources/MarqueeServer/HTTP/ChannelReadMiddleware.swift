import Foundation
import HTTPTypes
import Hummingbird
import MarqueeAPI
import MarqueeCore
import MarqueeEngine
import NIOCore

/// Answers `GET /v1/events/{eventKey}/channels/{environment}`, the read every follower's app makes
/// at kick-off, without the generated route: the answer remembered by the engine
/// (`ChannelAnswerCache`), a 304 when `If-None-Match` names its tag, otherwise its JSON as last
/// written for that tag. It sits after authentication and the contract check (roles, parameters),
/// so it answers only what the operation would; a request whose key has no app in its scope, or
/// with headers the generated route reads otherwise (`isPlain`), goes on to
/// `APIHandler.getEventChannel`, which answers the same way with the generated types.
struct ChannelReadMiddleware<Context: RequestContext>: RouterMiddleware {
    let events: EventService
    let cacheControl: String
    let answers: RenderedChannelAnswers

    static var template: String { "/v1/events/{eventKey}/channels/{environment}" }

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard request.method == .get, context.endpointPath == Self.template, Self.isPlain(request),
            let (key, environment) = Self.parameters(request.uri.path),
            let app = RequestScope.current?.app(allowing: .app)
        else {
            return try await next(request, context)
        }
        let view = try await events.activeChannel(app: app, key: key, environment: environment)
        var headers = HTTPFields()
        headers[.eTag] = view.entityTag
        headers[.cacheControl] = cacheControl
        if let ifNoneMatch = request.headers[.ifNoneMatch], view.isMatched(byIfNoneMatch: ifNoneMatch) {
            return Response(status: .notModified, headers: headers)
        }
        headers[.contentType] = "application/json; charset=utf-8"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: try answers.body(of: view)))
    }

    /// Whether the generated route would read the request's headers as they are: no `Accept` or
    /// one that takes JSON plainly (it refuses others, or parses lists), and an `If-None-Match`
    /// without `%` (it percent-decodes the value).
    static func isPlain(_ request: Request) -> Bool {
        guard request.acceptsJSONPlainly else { return false }
        if let tags = request.headers[.ifNoneMatch], tags.utf8.contains(UInt8(ascii: "%")) { return false }
        return true
    }

    /// The event key (percent-decoded, as the contract check read it) and the environment.
    static func parameters(_ path: String) -> (key: String, environment: APNSEnvironment)? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 6, let environment = APNSEnvironment(rawValue: String(parts[5])),
            let key = PercentDecoding.decoded(parts[3])
        else { return nil }
        return (key, environment)
    }
}
