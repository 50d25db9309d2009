import Logging
import NIOCore
import NIOHTTP2
import NIOPosix
import NIOSSL
import Synchronization

/// The open connections of every listener, so that shutdown can close them.
final class ConnectionRegistry: Sendable {
    private let channels = Mutex<[ObjectIdentifier: any Channel]>([:])

    func add(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        channels.withLock { $0[id] = channel }
        channel.closeFuture.whenComplete { [weak self] _ in
            self?.channels.withLock { $0[id] = nil }
        }
    }

    /// Starts closing every open connection. It does not wait: a TLS connection closes only when
    /// its peer answers close_notify (or a timeout passes), and a client that is itself waiting
    /// for the emulator to stop must not hold up the shutdown.
    func closeAll() {
        let open = channels.withLock { Array($0.values) }
        for channel in open {
            channel.close(promise: nil)
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
            .childChannelInitializer { channel in
                connections.add(channel)
                return channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    if let sslContext { try pipeline.addHandler(NIOSSLServerHandler(context: sslContext)) }
                    try pipeline.addHandler(
                        NIOHTTP2Handler(
                            mode: .server,
                            connectionConfiguration: connectionConfiguration,
                            streamConfiguration: streamConfiguration
                        )
                    )
                    try pipeline.addHandler(APNSHTTP2FrameHandler(processor: processor))
                }
            }
        return try await bootstrap.bind(host: host, port: port).get()
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
