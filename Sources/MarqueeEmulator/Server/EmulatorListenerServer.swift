import Logging
import NIOCore
import NIOHTTP2
import NIOPosix
import NIOSSL
import Synchronization

/// Asks an APNs connection to close as APNs does when it shuts down: GOAWAY `Shutdown`, then close.
struct EmulatorShutdownEvent: Sendable {}

/// The open connections of every listener, so that shutdown can close them.
final class ConnectionRegistry: Sendable {
    private struct Connection: Sendable {
        let channel: any Channel
        /// Whether it is an APNs (HTTP/2) connection, told of the shutdown with GOAWAY.
        let speaksAPNs: Bool
    }

    private let connections = Mutex<[ObjectIdentifier: Connection]>([:])

    func add(_ channel: any Channel, speaksAPNs: Bool) {
        let id = ObjectIdentifier(channel)
        connections.withLock { $0[id] = Connection(channel: channel, speaksAPNs: speaksAPNs) }
        channel.closeFuture.whenComplete { [weak self] _ in
            self?.connections.withLock { $0[id] = nil }
        }
    }

    /// Starts closing every open connection: APNs connections with GOAWAY `Shutdown` first. It does
    /// not wait: a TLS connection closes only when its peer answers close_notify (or a timeout
    /// passes), and a client that is itself waiting for the emulator to stop must not hold up the
    /// shutdown.
    func closeAll() {
        let open = connections.withLock { Array($0.values) }
        for connection in open {
            let channel = connection.channel
            guard connection.speaksAPNs else {
                channel.close(promise: nil)
                continue
            }
            channel.eventLoop.execute {
                channel.pipeline.syncOperations.fireUserInboundEventTriggered(EmulatorShutdownEvent())
            }
        }
    }
}

/// Binds one listener: TLS (ALPN `h2`) or h2c with prior knowledge, an `NIOHTTP2Handler` without
/// stream multiplexing, and the frame handler.
enum EmulatorListenerServer {
    static func bind(
        listener: APNSEmulatorListener,
        host: String,
        port: Int,
        sslContext: NIOSSLContext?,
        state: EmulatorState,
        connections: ConnectionRegistry,
        group: any EventLoopGroup
    ) async throws -> any Channel {
        let processor = APNSRequestProcessor(state: state, listener: listener)
        var logger = state.configuration.logger
        logger[metadataKey: "emulator.listener"] = "\(listener)"
        let connectionConfiguration = {
            var configuration = NIOHTTP2Handler.ConnectionConfiguration()
            configuration.initialSettings = APNSHTTP2FrameHandler.initialSettings(configuration: state.configuration)
            // NIO's header-block validation costs a tenth of a request; the emulator checks every
            // header APNs defines itself, and HPACK framing errors are still connection errors.
            configuration.headerBlockValidation = .disabled
            // Checked by the frame handler from the header it has already read.
            configuration.contentLengthValidation = .disabled
            return configuration
        }()
        let streamConfiguration = NIOHTTP2Handler.StreamConfiguration()
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { [logger] channel in
                connections.add(channel, speaksAPNs: true)
                var logger = logger
                logger[metadataKey: "emulator.peer"] = "\(channel.remoteAddress.map { "\($0)" } ?? "?")"
                logger.debug("APNs connection opened")
                channel.closeFuture.whenComplete { [logger] _ in logger.debug("APNs connection closed") }
                return channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    if let sslContext { try pipeline.addHandler(NIOSSLServerHandler(context: sslContext)) }
                    let goAwayWriter = GoAwayWriter()
                    try pipeline.addHandler(goAwayWriter)
                    try pipeline.addHandler(
                        NIOHTTP2Handler(
                            mode: .server,
                            connectionConfiguration: connectionConfiguration,
                            streamConfiguration: streamConfiguration
                        )
                    )
                    try pipeline.addHandler(
                        APNSHTTP2FrameHandler(processor: processor, goAwayWriter: goAwayWriter, logger: logger)
                    )
                }
            }
        let channel = try await bootstrap.bind(host: host, port: port).get()
        logger.debug("listening", metadata: ["emulator.address": "\(channel.localAddress.map { "\($0)" } ?? "?")"])
        return channel
    }

    /// A server context for the emulator's certificate, offering only `h2` by ALPN.
    static func makeSSLContext(certificateChainPEM: String, privateKeyPEM: String) throws -> NIOSSLContext {
        let chain = try NIOSSLCertificate.fromPEMBytes(Array(certificateChainPEM.utf8))
        let key = try NIOSSLPrivateKey(bytes: Array(privateKeyPEM.utf8), format: .pem)
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) },
            privateKey: .privateKey(key)
        )
        tls.applicationProtocols = ["h2"]
        tls.minimumTLSVersion = .tlsv12
        return try NIOSSLContext(configuration: tls)
    }
}
