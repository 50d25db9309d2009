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

    var baseURL: URL { URL(string: "http://127.0.0.1:\(channel.localAddress?.port ?? 0)")! }
    var requests: [Request] { recorded.withLock { $0 } }

    func answer(_ status: HTTPResponseStatus) { self.status.withLock { $0 = status } }

    private init(channel: any Channel) {
        self.channel = channel
        self.recorded = Mutex([])
        self.status = Mutex(.noContent)
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

    fileprivate func record(_ request: Request) -> HTTPResponseStatus {
        recorded.withLock { $0.append(request) }
        return status.withLock { $0 }
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
                let status = box.server.withLock { $0 }?.record(request) ?? .internalServerError
                var headers = HTTPHeaders()
                headers.add(name: "content-length", value: "0")
                context.write(
                    wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))),
                    promise: nil
                )
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
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
