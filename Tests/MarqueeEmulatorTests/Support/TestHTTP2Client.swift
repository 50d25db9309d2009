import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL
import Synchronization

/// A response as the test client saw it.
struct TestResponse: Sendable {
    var status: Int
    var headers: HPACKHeaders
    var body: [UInt8]

    var bodyText: String { String(decoding: body, as: UTF8.self) }

    /// The `reason` of an APNs error body.
    var reason: String? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else { return nil }
        return object["reason"] as? String
    }

    var json: [String: Any]? {
        try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any]
    }

    func header(_ name: String) -> String? { headers.first(name: name) }
}

/// A deliberately plain HTTP/2 client over one connection (TLS trusting the emulator's CA, or
/// h2c), one child channel per request: the tests talk to the emulator as any client would.
final class TestHTTP2Client: Sendable {
    let channel: any Channel
    private let multiplexer: NIOHTTP2Handler.StreamMultiplexer
    let authority: String
    /// What the connection saw at the HTTP/2 level (SETTINGS, GOAWAY).
    let events: ConnectionEvents

    private init(
        channel: any Channel,
        multiplexer: NIOHTTP2Handler.StreamMultiplexer,
        authority: String,
        events: ConnectionEvents
    ) {
        self.channel = channel
        self.multiplexer = multiplexer
        self.authority = authority
        self.events = events
    }

    /// Connects to `url` (`https://127.0.0.1:port` or `http://...` for h2c).
    static func connect(to url: String, caCertificatePEM: String? = nil) async throws -> TestHTTP2Client {
        guard let components = URLComponents(string: url), let host = components.host, let port = components.port else {
            throw URLError(.badURL)
        }
        let sslContext: NIOSSLContext?
        if components.scheme == "https" {
            var tls = TLSConfiguration.makeClientConfiguration()
            if let caCertificatePEM {
                tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(caCertificatePEM.utf8)))
            }
            tls.applicationProtocols = ["h2"]
            sslContext = try NIOSSLContext(configuration: tls)
        } else {
            sslContext = nil
        }
        let events = ConnectionEvents()
        // The whole pipeline (TLS, HTTP/2, the event recorder) is built in the channel initializer,
        // before the socket is first read: added after `connect` returns, the HTTP/2 handler could
        // miss the server's preface (SETTINGS, WINDOW_UPDATE) and early frames, which the pipeline
        // tail drops, leaving requests on that connection unanswered.
        let (channel, multiplexer) = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    if let sslContext {
                        try pipeline.addHandler(try NIOSSLClientHandler(context: sslContext, serverHostname: nil))
                    }
                    // The client sends what a test asks for, a content-length its body contradicts included.
                    var connectionConfiguration = NIOHTTP2Handler.ConnectionConfiguration()
                    connectionConfiguration.contentLengthValidation = .disabled
                    let multiplexer = try pipeline.configureHTTP2Pipeline(
                        mode: .client,
                        connectionConfiguration: connectionConfiguration,
                        streamConfiguration: NIOHTTP2Handler.StreamConfiguration()
                    ) { stream in
                        stream.eventLoop.makeSucceededVoidFuture()
                    }
                    try pipeline.addHandler(ConnectionEventRecorder(events: events))
                    return (channel, multiplexer)
                }
            }
        return TestHTTP2Client(channel: channel, multiplexer: multiplexer, authority: "\(host):\(port)", events: events)
    }

    func close() async {
        try? await channel.close()
    }

    /// Sends one request and waits for its complete response.
    func send(
        method: String = "POST",
        path: String,
        headers: [(String, String)] = [],
        body: [UInt8] = []
    ) async throws -> TestResponse {
        let promise = channel.eventLoop.makePromise(of: TestResponse.self)
        var requestHeaders = HPACKHeaders([
            (":method", method), (":scheme", "https"), (":path", path), (":authority", authority),
        ])
        for (name, value) in headers { requestHeaders.add(name: name, value: value) }
        let streamPromise = channel.eventLoop.makePromise(of: (any Channel).self)
        multiplexer.createStreamChannel(promise: streamPromise) { stream in
            stream.eventLoop.makeCompletedFuture {
                try stream.pipeline.syncOperations.addHandler(ResponseCollector(promise: promise))
            }
        }
        let stream = try await streamPromise.futureResult.get()
        let hasBody = !body.isEmpty
        stream.write(HTTP2Frame.FramePayload.headers(.init(headers: requestHeaders, endStream: !hasBody)), promise: nil)
        if hasBody {
            stream.write(
                HTTP2Frame.FramePayload.data(.init(data: .byteBuffer(ByteBuffer(bytes: body)), endStream: true)),
                promise: nil
            )
        }
        stream.flush()
        return try await promise.futureResult.get()
    }

    func send(
        method: String = "POST",
        path: String,
        headers: [(String, String)] = [],
        body: String
    ) async throws -> TestResponse {
        try await send(method: method, path: path, headers: headers, body: Array(body.utf8))
    }
}

/// Settings and GOAWAY frames the server sent.
final class ConnectionEvents: Sendable {
    private struct Seen: Sendable {
        var maxConcurrentStreams: [Int] = []
        var goAway: GoAway?
    }

    struct GoAway: Sendable {
        var lastStreamID: Int
        var debugData: String
    }

    private let seen = Mutex(Seen())

    var maxConcurrentStreams: [Int] { seen.withLock { $0.maxConcurrentStreams } }
    var goAway: GoAway? { seen.withLock { $0.goAway } }

    func record(maxConcurrentStreams value: Int) { seen.withLock { $0.maxConcurrentStreams.append(value) } }
    func record(goAwayLastStreamID id: Int, debugData: String) {
        seen.withLock { $0.goAway = GoAway(lastStreamID: id, debugData: debugData) }
    }
}

private final class ConnectionEventRecorder: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias InboundOut = HTTP2Frame
    let events: ConnectionEvents

    init(events: ConnectionEvents) { self.events = events }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.payload {
        case .settings(.settings(let settings)):
            for setting in settings where setting.parameter == .maxConcurrentStreams {
                events.record(maxConcurrentStreams: setting.value)
            }
        case .goAway(let lastStreamID, _, let opaqueData):
            events.record(
                goAwayLastStreamID: Int(Int32(lastStreamID)),
                debugData: opaqueData.map { String(buffer: $0) } ?? ""
            )
        default:
            break
        }
        context.fireChannelRead(data)
    }
}

/// The server answered a request with RST_STREAM instead of a response.
struct StreamReset: Error, Equatable {
    let code: HTTP2ErrorCode
}

private final class ResponseCollector: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    let promise: EventLoopPromise<TestResponse>
    private var response = TestResponse(status: 0, headers: [:], body: [])
    private var completed = false

    init(promise: EventLoopPromise<TestResponse>) { self.promise = promise }

    private func finish(_ result: Result<TestResponse, any Error>) {
        guard !completed else { return }
        completed = true
        promise.completeWith(result)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .headers(let headers):
            if let status = headers.headers.first(name: ":status").flatMap(Int.init) { response.status = status }
            response.headers.add(contentsOf: headers.headers)
            if headers.endStream { finish(.success(response)) }
        case .data(let data):
            if case .byteBuffer(let buffer) = data.data { response.body.append(contentsOf: buffer.readableBytesView) }
            if data.endStream { finish(.success(response)) }
        case .rstStream(let code):
            finish(.failure(StreamReset(code: code)))
        default:
            break
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        finish(.failure(error))
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish(.failure(ChannelError.ioOnClosedChannel))
    }
}
