import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// A small HTTP/1.1 server standing in for Marquee: it records every request and answers 204
/// (or the status set), so a test reads what the emulator's played apps reported.
final class RecordingMarquee: Sendable {
    struct Request: Sendable, Equatable {
        var method: String
        var path: String
        var authorization: String?
        var body: String

        /// The presence report's JSON body, decoded.
        var json: [String: String] {
            let object = (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any] ?? [:]
            return object.compactMapValues { $0 as? String }
        }
    }

    private let channel: any Channel
    private let recorded: Mutex<[Request]>
    private let status: Mutex<HTTPResponseStatus>
    /// Requests whose path contains this are answered only at `releaseHeld()`; the answers owed.
    private let held: Mutex<(pathPart: String?, answers: [@Sendable () -> Void])>

    var baseURL: URL { URL(string: "http://127.0.0.1:\(channel.localAddress?.port ?? 0)")! }
    var requests: [Request] { recorded.withLock { $0 } }

    func answer(_ status: HTTPResponseStatus) { self.status.withLock { $0 = status } }

    private init(channel: any Channel) {
        self.channel = channel
        self.recorded = Mutex([])
        self.status = Mutex(.noContent)
        self.held = Mutex((nil, []))
    }

    static func start() async throws -> RecordingMarquee {
        let box = Box()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 64)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.pipeline.configureHTTPServerPipeline().flatMap {
                    channel.pipeline.addHandler(Handler(box: box))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        let server = RecordingMarquee(channel: channel)
        box.server.withLock { $0 = server }
        return server
    }

    func stop() async {
        try? await channel.close()
    }

    /// Leaves requests whose path contains `pathPart` unanswered until `releaseHeld()`: a Marquee
    /// that takes a request and does not answer.
    func holdAnswers(toPathsContaining pathPart: String) { held.withLock { $0.pathPart = pathPart } }

    /// Answers the held requests and holds no more.
    func releaseHeld() {
        let answers = held.withLock { held in
            defer { held = (nil, []) }
            return held.answers
        }
        for answer in answers { answer() }
    }

    /// Records `request` and answers it at once with `answer`, or later if it is to be held.
    fileprivate func record(_ request: Request, answer: @escaping @Sendable (HTTPResponseStatus) -> Void) {
        recorded.withLock { $0.append(request) }
        let status = status.withLock { $0 }
        let answerNow = held.withLock { held -> Bool in
            guard let part = held.pathPart, request.path.contains(part) else { return true }
            held.answers.append { answer(status) }
            return false
        }
        if answerNow { answer(status) }
    }

    /// The server, set once it is bound (the handlers are made before).
    fileprivate final class Box: Sendable {
        let server = Mutex<RecordingMarquee?>(nil)
    }

    private final class Handler: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        private let box: Box
        private var head: HTTPRequestHead?
        private var body = ByteBuffer()

        init(box: Box) { self.box = box }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                self.head = head
                body.clear()
            case .body(var part):
                body.writeBuffer(&part)
            case .end:
                guard let head else { return }
                let request = Request(
                    method: head.method.rawValue,
                    path: head.uri,
                    authorization: head.headers.first(name: "authorization"),
                    body: body.readString(length: body.readableBytes) ?? ""
                )
                let version = head.version
                let bound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
                let answer: @Sendable (HTTPResponseStatus) -> Void = { status in
                    bound.eventLoop.execute {
                        var headers = HTTPHeaders()
                        headers.add(name: "content-length", value: "0")
                        let (handler, context) = bound.value
                        let head = HTTPResponseHead(version: version, status: status, headers: headers)
                        context.write(handler.wrapOutboundOut(.head(head)), promise: nil)
                        context.writeAndFlush(handler.wrapOutboundOut(.end(nil)), promise: nil)
                    }
                }
                guard let server = box.server.withLock({ $0 }) else { return answer(.internalServerError) }
                server.record(request, answer: answer)
            }
        }
    }
}

/// Polls `condition` until it holds or a generous deadline passes: for what another task does.
func eventually(
    _ what: String,
    within timeout: Duration = .seconds(20),
    _ condition: () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(20))
    }
    throw EventuallyTimeout(what: what)
}

struct EventuallyTimeout: Error, CustomStringConvertible {
    var what: String
    var description: String { "timed out waiting for \(what)" }
}
