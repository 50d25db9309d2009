import CoreMetrics
import Crypto
import Foundation
import Logging
import MarqueeAPNS
import MarqueeCore
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL
import Synchronization
import Testing

@testable import MarqueeEmulator

/// A request as the scripted server received it.
struct ScriptedRequest: Sendable, Hashable {
    /// 1 for the first connection the server accepted, 2 for the next, …
    var connection: Int
    var streamID: HTTP2StreamID
    /// `apns-id` (device pushes) or `apns-request-id` (broadcasts, channel management).
    var apnsID: String
    /// 1 the first time a request with this ID arrived (on any connection), 2 the second, …
    var arrival: Int
}

/// A small HTTP/2 server over TLS (the emulator's generated CA and leaf) whose every answer a test
/// scripts at the frame level: answer a stream, hold it, reset it with a code, send GOAWAY with a
/// chosen last-stream-id, close the connection. It records every request it received, so a test
/// counts how many times APNs "saw" each push.
final class ScriptedAPNSServer: Sendable {
    /// Called on the connection's event loop for every complete request.
    typealias Script = @Sendable (ScriptedConnection, ScriptedRequest) -> Void

    let port: Int
    let caCertificatePEM: String
    private let channel: any Channel
    private let recorder: Recorder

    private init(port: Int, caCertificatePEM: String, channel: any Channel, recorder: Recorder) {
        self.port = port
        self.caCertificatePEM = caCertificatePEM
        self.channel = channel
        self.recorder = recorder
    }

    /// Every request received so far, in order.
    var requests: [ScriptedRequest] { recorder.requests.withLock { $0 } }

    /// How many times a request with this `apns-id` arrived.
    func count(_ apnsID: UUID) -> Int {
        count(apnsID.uuidString.lowercased())
    }

    func count(_ apnsID: String) -> Int {
        requests.filter { $0.apnsID == apnsID }.count
    }

    static func start(script: @escaping Script) async throws -> ScriptedAPNSServer {
        let authority = try EmulatorCertificateAuthority.generate()
        let sslContext = try EmulatorListenerServer.makeSSLContext(
            certificateChainPEM: authority.leafCertificatePEM,
            privateKeyPEM: authority.leafPrivateKeyPEM
        )
        let recorder = Recorder()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    try sync.addHandler(NIOSSLServerHandler(context: sslContext))
                    try sync.addHandler(
                        NIOHTTP2Handler(
                            mode: .server,
                            initialSettings: [HTTP2Setting(parameter: .maxConcurrentStreams, value: 100)]
                        )
                    )
                    try sync.addHandler(
                        ScriptedHandler(index: recorder.nextConnection(), recorder: recorder, script: script)
                    )
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        let port = try #require(channel.localAddress?.port)
        return ScriptedAPNSServer(
            port: port,
            caCertificatePEM: authority.caCertificatePEM,
            channel: channel,
            recorder: recorder
        )
    }

    func stop() async {
        try? await channel.close()
    }

    /// A client for this server, one connection per endpoint, with the tests' fast retries.
    func makeClient(
        retryPolicy: APNSRetryPolicy = testRetryPolicy,
        metricsFactory: any MetricsFactory = NOOPMetricsHandler.instance
    ) throws -> APNSClient {
        let endpoint = APNSEndpoint(host: "127.0.0.1", port: port, security: .tls(trustRoots: .pem(caCertificatePEM)))
        return try APNSClient(
            configuration: APNSClientConfiguration(
                environment: .sandbox,
                signingKey: APNSSigningKey(privateKey: .init(), keyID: "ABC123DEFG", teamID: "DEF123GHIJ"),
                pushEndpoint: endpoint,
                channelManagementEndpoint: endpoint,
                retryPolicy: retryPolicy,
                transport: APNSClientConfiguration.Transport(connectionsPerEndpoint: 1),
                metricsFactory: metricsFactory
            ),
            logger: testLogger
        )
    }

    /// What the handlers share: the request log and the connection count.
    private final class Recorder: Sendable {
        let requests = Mutex<[ScriptedRequest]>([])
        private let connections = Atomic<Int>(0)

        func nextConnection() -> Int {
            connections.add(1, ordering: .relaxed).newValue
        }
    }

    private final class ScriptedHandler: ChannelInboundHandler {
        typealias InboundIn = HTTP2Frame
        typealias OutboundOut = HTTP2Frame

        private let index: Int
        private let recorder: Recorder
        private let script: Script
        private var connection: ScriptedConnection?
        /// Requests whose body has not ended yet: their `apns-id`.
        private var partial: [HTTP2StreamID: String] = [:]

        init(index: Int, recorder: Recorder, script: @escaping Script) {
            self.index = index
            self.recorder = recorder
            self.script = script
        }

        func handlerAdded(context: ChannelHandlerContext) {
            connection = ScriptedConnection(index: index, context: context)
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let frame = unwrapInboundIn(data)
            switch frame.payload {
            case .headers(let headers):
                let apnsID =
                    headers.headers.first(name: "apns-id") ?? headers.headers.first(name: "apns-request-id") ?? ""
                if headers.endStream {
                    received(frame.streamID, apnsID: apnsID)
                } else {
                    partial[frame.streamID] = apnsID
                }
            case .data(let body) where body.endStream:
                if let apnsID = partial.removeValue(forKey: frame.streamID) { received(frame.streamID, apnsID: apnsID) }
            default:
                break
            }
        }

        private func received(_ streamID: HTTP2StreamID, apnsID: String) {
            guard let connection else { return }
            let request = recorder.requests.withLock { requests in
                let arrival = requests.filter { $0.apnsID == apnsID }.count + 1
                let request = ScriptedRequest(connection: index, streamID: streamID, apnsID: apnsID, arrival: arrival)
                requests.append(request)
                return request
            }
            script(connection, request)
        }
    }
}

/// One connection of the scripted server, as its script sees it (on the connection's event loop).
final class ScriptedConnection {
    let index: Int
    private let context: ChannelHandlerContext
    /// Requests the script held back, unanswered, in arrival order.
    private(set) var held: [ScriptedRequest] = []

    fileprivate init(index: Int, context: ChannelHandlerContext) {
        self.index = index
        self.context = context
    }

    func hold(_ request: ScriptedRequest) {
        held.append(request)
    }

    /// Answers with `status` (and APNs' `reason` body when given).
    func answer(_ request: ScriptedRequest, status: Int = 200, reason: String? = nil) {
        held.removeAll { $0 == request }
        var headers = HPACKHeaders([(":status", "\(status)")])
        if !request.apnsID.isEmpty { headers.add(name: "apns-id", value: request.apnsID) }
        if let reason {
            let body = ByteBuffer(string: #"{"reason":"\#(reason)"}"#)
            context.write(
                wrap(HTTP2Frame(streamID: request.streamID, payload: .headers(.init(headers: headers)))),
                promise: nil
            )
            context.writeAndFlush(
                wrap(
                    HTTP2Frame(
                        streamID: request.streamID,
                        payload: .data(.init(data: .byteBuffer(body), endStream: true))
                    )
                ),
                promise: nil
            )
        } else {
            context.writeAndFlush(
                wrap(
                    HTTP2Frame(streamID: request.streamID, payload: .headers(.init(headers: headers, endStream: true)))
                ),
                promise: nil
            )
        }
    }

    /// RST_STREAM with `code`.
    func reset(_ request: ScriptedRequest, code: HTTP2ErrorCode) {
        held.removeAll { $0 == request }
        context.writeAndFlush(wrap(HTTP2Frame(streamID: request.streamID, payload: .rstStream(code))), promise: nil)
    }

    /// GOAWAY naming `lastStreamID` as the last stream the server processes; then, if asked, the
    /// connection closes once the frame is out.
    func goAway(lastStreamID: HTTP2StreamID, thenClose: Bool = false) {
        let frame = HTTP2Frame(
            streamID: .rootStream,
            payload: .goAway(lastStreamID: lastStreamID, errorCode: .noError, opaqueData: nil)
        )
        let written = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrap(frame), promise: written)
        if thenClose {
            let context = NIOLoopBound(self.context, eventLoop: self.context.eventLoop)
            written.futureResult.whenComplete { _ in context.value.close(promise: nil) }
        }
    }

    /// Closes the TCP connection with every held stream unanswered.
    func close() {
        context.close(promise: nil)
    }

    private func wrap(_ frame: HTTP2Frame) -> NIOAny {
        NIOAny(frame)
    }
}
