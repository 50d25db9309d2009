import HTTPTypes
import Logging
import MarqueeCore
import MarqueeEngine
import NIOCore

/// A device's token registration (`PUT /v1/push-to-start-tokens/{token}`) answered where its
/// request is read, on the connection's event loop (`EventLoopAnswerHandler`), when everything the
/// middleware chain checks can be checked there: the key as this replica last authenticated it
/// (`CredentialCache`), the address not throttled, the body within the size and depth limits, and
/// the contract's route, role, path and body schema (`ContractMiddleware.admits`). The body is read
/// as `TokenRegistrationMiddleware` reads it, and registered through the engine
/// (`TokenRegistry.register`, where registrations arriving together share a statement).
///
/// At kick-off every follower's app registers its token, one request each; through Hummingbird a
/// registration's hops and middleware cost more than its statement. The answer is the one
/// `TokenRegistrationMiddleware` gives (a problem document for a failure, as `RequestIDMiddleware`
/// writes it), with the headers the chain adds, counted in the same metrics and logged in the same
/// line. Anything else goes on to Hummingbird.
struct TokenRegistrationAnswer: Sendable {
    let apps: AppAdministration
    let tokens: TokenRegistry
    let failures: AuthenticationFailures
    /// The contract's `PUT /v1/push-to-start-tokens/{token}`.
    let operation: APIContract.Operation
    let maximumBodyBytes: Int
    let maximumDepth: Int
    let chain: EventLoopAnswerChain

    /// The most body bytes held for an answer here; a longer body goes to Hummingbird (a
    /// registration's is a few hundred bytes).
    var bodyLimit: Int { min(4096, maximumBodyBytes) }

    static var route: String { TokenRegistrationMiddleware<MarqueeRequestContext>.template }

    /// A registration admitted here, to be written (`answer`).
    struct Admitted: Sendable {
        var app: App
        var registration: PushToStartRegistration
        var requestID: String
        var keyPrefix: String
        var path: String
        var started: ContinuousClock.Instant
    }

    /// What the middleware chain puts on `admitted`'s log lines.
    private static func metadata(of admitted: Admitted) -> Logger.Metadata {
        [
            "request.id": .string(admitted.requestID), "api_key.prefix": .string(admitted.keyPrefix),
            "app.id": .stringConvertible(admitted.app.id),
        ]
    }

    struct Answer: Sendable {
        var head: HTTPResponse
        var body: ByteBuffer
    }

    /// Whether `request`'s head may be answered here once its body has arrived: a PUT of a
    /// registration's path (a token with nothing to percent-decode) with a plain JSON body.
    static func mayAnswer(_ request: HTTPRequest) -> Bool {
        token(of: request) != nil
    }

    /// The token of a request `mayAnswer` takes; nil for any other.
    private static func token(of request: HTTPRequest) -> String? {
        guard request.method == .put, let path = request.path, !path.utf8.contains(UInt8(ascii: "?")) else {
            return nil
        }
        let fields = request.headerFields
        guard fields.hasPlainJSONBody, fields.acceptsJSONPlainly, !fields.asksToClose, fields[.expect] == nil else {
            return nil
        }
        return TokenRegistrationMiddleware<MarqueeRequestContext>.token(inPath: path)
    }

    /// The registration, when the middleware chain would let it through to
    /// `TokenRegistrationMiddleware` and that would take it; nil for Hummingbird to answer.
    func admit(
        _ request: HTTPRequest,
        body: ByteBuffer,
        from address: SocketAddress?,
        keys: inout LastPresentedKey
    ) -> Admitted? {
        let started = ContinuousClock.now
        let fields = request.headerFields
        guard let token = Self.token(of: request), let path = request.path,
            failures.retryAfter(address) == nil,
            let credential = HTTPFieldText.bearerCredential(fields[.authorization]),
            let keyHash = keys.hash(of: credential),
            let caller = apps.rememberedCaller(keyHash: keyHash),
            let app = caller.ownApp(allowing: .app),
            (1...maximumBodyBytes).contains(body.readableBytes),
            JSONDepth.exceeds(maximumDepth, in: body.readableBytesView) == nil,
            let value = JSONParser.value(of: body),
            case .object(let object) = value,
            ContractMiddleware<MarqueeRequestContext>.admits(
                operation,
                pathValues: ["token": token],
                key: caller.key,
                body: value
            ),
            let registration = PushToStartRegistration(requestBody: object, token: token)
        else {
            return nil
        }
        return Admitted(
            app: app,
            registration: registration,
            requestID: RequestIDMiddleware<MarqueeRequestContext>.requestID(of: fields),
            keyPrefix: caller.key.prefix,
            path: path,
            started: started
        )
    }

    /// Registers `admitted` and makes its answer: the row written, or the problem document.
    func answer(_ admitted: Admitted) async -> Answer {
        var answer: Answer
        do {
            let registered = try await tokens.register(app: admitted.app, admitted.registration)
            var fields = HTTPFields()
            fields[.contentType] = "application/json; charset=utf-8"
            answer = Answer(
                head: HTTPResponse(status: .ok, headerFields: fields),
                body: ByteBuffer(bytes: try PushToStartTokenAnswer.json(registered))
            )
        } catch {
            let problem = RequestIDMiddleware<MarqueeRequestContext>.problem(
                answering: error,
                logger: chain.logger(Self.metadata(of: admitted)),
                path: PushTokenRedaction.redactingTokens(inPath: admitted.path)
            )
            let (head, body) = problem.answer(requestID: admitted.requestID)
            answer = Answer(head: head, body: body)
        }
        chain.finish(
            &answer.head,
            body: answer.body,
            requestID: admitted.requestID,
            method: .put,
            route: Self.route,
            path: admitted.path,
            started: admitted.started,
            metadata: Self.metadata(of: admitted)
        )
        return answer
    }
}
