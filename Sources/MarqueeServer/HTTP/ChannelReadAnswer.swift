import HTTPTypes
import Logging
import MarqueeCore
import MarqueeEngine
import NIOCore

/// The channel-ID read (`GET /v1/events/{eventKey}/channels/{environment}`) answered where its
/// request is read, on the connection's event loop (`EventLoopAnswerHandler`), when all it
/// needs is in memory: the key as this replica last authenticated it (`CredentialCache`) and the
/// event's answer (`ChannelAnswerCache`), both forgotten on every replica when they change.
///
/// Every follower's app makes this read at kick-off, and the middleware chain's hops between the
/// event loop and Swift's pool cost several times the lookup (about 230 µs of CPU a read when the
/// reads come one at a time, as apps send them). The answer is the one `ChannelReadMiddleware`
/// gives, with the headers the chain adds (request ID, `Date`, `Server`), counted in the same
/// metrics and logged in the same line. Anything else (another request, a key or an answer not
/// remembered, a throttled address, headers the generated route reads otherwise) goes on to
/// Hummingbird, which answers it and remembers what it read for the next.
struct ChannelReadAnswer: Sendable {
    let apps: AppAdministration
    let events: EventService
    let failures: AuthenticationFailures
    let rendered: RenderedChannelAnswers
    let cacheControl: String
    let chain: EventLoopAnswerChain

    struct Answer: Sendable {
        var head: HTTPResponse
        var body: ByteBuffer?
    }

    static var route: String { ChannelReadMiddleware<MarqueeRequestContext>.template }

    /// Whether `request`'s head may be answered here, once its end has arrived: a GET of the
    /// read's path with nothing to percent-decode, announcing no body.
    static func mayAnswer(_ request: HTTPRequest) -> Bool {
        request.method == .get && request.path.flatMap(plainParameters) != nil
            && !request.headerFields.announcesBody
    }

    /// The answer to `request` from memory, or nil for Hummingbird to answer.
    func answer(_ request: HTTPRequest, from address: SocketAddress?, keys: inout LastPresentedKey) -> Answer? {
        let started = ContinuousClock.now
        let fields = request.headerFields
        guard request.method == .get, !fields.announcesBody, let path = request.path,
            let (key, environment) = Self.plainParameters(path),
            ChannelReadMiddleware<MarqueeRequestContext>.isPlain(fields), !fields.asksToClose,
            failures.retryAfter(address) == nil,
            let credential = HTTPFieldText.bearerCredential(fields[.authorization]),
            let keyHash = keys.hash(of: credential),
            let app = apps.rememberedCaller(keyHash: keyHash)?.ownApp(allowing: .app),
            let view = events.rememberedActiveChannel(app: app, key: key, environment: environment),
            let (status, headers, body) = try? rendered.answer(
                view,
                ifNoneMatch: fields[.ifNoneMatch],
                cacheControl: cacheControl
            )
        else {
            return nil
        }
        let requestID = RequestIDMiddleware<MarqueeRequestContext>.requestID(of: fields)
        var head = HTTPResponse(status: status, headerFields: headers)
        chain.finish(
            &head,
            body: body,
            requestID: requestID,
            method: .get,
            route: Self.route,
            path: path,
            started: started,
            metadata: ["request.id": .string(requestID)]
        )
        return Answer(head: head, body: body)
    }

    /// The event key and environment of a read's path whose key needs no percent-decoding and
    /// already matches the document's pattern (`^[A-Za-z0-9._:-]{1,200}$`), with no query.
    static func plainParameters(_ path: String) -> (key: String, environment: APNSEnvironment)? {
        let prefix = "/v1/events/"
        guard path.utf8.starts(with: prefix.utf8) else { return nil }
        let rest = path.utf8.dropFirst(prefix.utf8.count)
        guard let slash = rest.firstIndex(of: UInt8(ascii: "/")) else { return nil }
        let key = rest[..<slash]
        guard (1...200).contains(key.count), key.allSatisfy(isEventKeyByte) else { return nil }
        let tail = rest[slash...]
        let channels = "/channels/"
        guard tail.starts(with: channels.utf8),
            let environment = APNSEnvironment(rawValue: String(Substring(tail.dropFirst(channels.utf8.count))))
        else { return nil }
        return (String(Substring(key)), environment)
    }

    private static func isEventKeyByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: ":"),
            UInt8(ascii: "-"):
            return true
        default:
            return false
        }
    }

}
