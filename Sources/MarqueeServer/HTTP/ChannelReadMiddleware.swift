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
        guard request.method == .get, context.endpointPath == Self.template, Self.isPlain(request.headers),
            let (key, environment) = Self.parameters(request.uri.path),
            let app = RequestScope.current?.app(allowing: .app)
        else {
            return try await next(request, context)
        }
        let view = try await events.activeChannel(app: app, key: key, environment: environment)
        let (status, headers, body) = try answers.answer(
            view,
            ifNoneMatch: request.headers[.ifNoneMatch],
            cacheControl: cacheControl
        )
        return Response(
            status: status,
            headers: headers,
            body: body.map { ResponseBody(byteBuffer: $0) } ?? ResponseBody()
        )
    }

    /// Whether the generated route would read the request's headers as they are: no `Accept` or
    /// one that takes JSON plainly (it refuses others, or parses lists), and an `If-None-Match`
    /// without `%` (it percent-decodes the value).
    static func isPlain(_ headers: HTTPFields) -> Bool {
        guard headers.acceptsJSONPlainly else { return false }
        if let tags = headers[.ifNoneMatch], tags.utf8.contains(UInt8(ascii: "%")) { return false }
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
