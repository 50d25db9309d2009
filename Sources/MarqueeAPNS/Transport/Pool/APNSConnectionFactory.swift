import Logging
import NIOCore
import NIOHTTP2
import NIOPosix
import NIOSSL

/// Opens connections to one endpoint over TCP: TLS offering only `h2` by ALPN (or cleartext h2c
/// with prior knowledge when the endpoint says so, for the emulator and tests), then the HTTP/2
/// framer and an `APNSConnectionHandler`. The TLS context is built once, here, not per connection.
struct APNSConnectionFactory: APNSPoolConnectionFactory {
    let endpoint: APNSEndpoint
    let configuration: APNSClientConfiguration.Transport
    let tokenCache: APNSProviderTokenCache
    let metrics: APNSClientMetrics
    let logger: Logger
    /// `:scheme` and `:authority`, computed once rather than per request.
    private let scheme: String
    private let authority: String
    private let sslContext: NIOSSLContext?

    /// What this side announces in its SETTINGS.
    private static let localSettings = [
        HTTP2Setting(parameter: .maxConcurrentStreams, value: 100),
        HTTP2Setting(parameter: .initialWindowSize, value: 1 << 20),
        HTTP2Setting(parameter: .maxHeaderListSize, value: 1 << 16),
        HTTP2Setting(parameter: .enablePush, value: 0),
    ]

    init(
        endpoint: APNSEndpoint,
        configuration: APNSClientConfiguration.Transport,
        tokenCache: APNSProviderTokenCache,
        metrics: APNSClientMetrics,
        logger: Logger
    ) throws(APNSError) {
        self.endpoint = endpoint
        self.configuration = configuration
        self.tokenCache = tokenCache
        self.metrics = metrics
        self.logger = logger
        scheme = endpoint.scheme
        authority = endpoint.authority
        sslContext = try Self.makeSSLContext(for: endpoint)
    }

    private static func makeSSLContext(for endpoint: APNSEndpoint) throws(APNSError) -> NIOSSLContext? {
        guard case .tls(let trustRoots) = endpoint.security else { return nil }
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.applicationProtocols = ["h2"]
        tls.minimumTLSVersion = .tlsv12
        do {
            switch trustRoots {
            case .system: break
            case .pemFile(let path): tls.trustRoots = .file(path)
            case .pem(let pem): tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(pem.utf8)))
            }
            return try NIOSSLContext(configuration: tls)
        } catch {
            throw .invalidConfiguration("cannot set up TLS for \(endpoint.host): \(error)")
        }
    }

    func makeConnection(
        connectionID: Int,
        on eventLoop: any EventLoop,
        delegate: any APNSConnectionDelegate
    ) -> (connection: any APNSPoolConnection, connected: EventLoopFuture<Void>) {
        let handler = APNSConnectionHandler(
            connectionID: connectionID,
            transport: configuration,
            scheme: scheme,
            authority: authority,
            tokenCache: tokenCache,
            metrics: metrics,
            logger: logger,
            delegate: delegate
        )
        let sslContext = self.sslContext
        let serverHostname = Self.isIPAddress(endpoint.host) ? nil : endpoint.host
        let loopBoundHandler = NIOLoopBound(handler, eventLoop: eventLoop)
        logger.debug("Connecting to APNs", metadata: ["apns.connection": "\(connectionID)"])
        let connected = ClientBootstrap(group: eventLoop)
            .connectTimeout(configuration.connectTimeout)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    if let sslContext {
                        try sync.addHandler(NIOSSLClientHandler(context: sslContext, serverHostname: serverHostname))
                        // One TLS record per batch rather than per frame (see the handler).
                        try sync.addHandler(APNSWriteCoalescingHandler())
                    }
                    // HTTP/2 framing only: the connection handler's state machine keeps the streams
                    // (see the framer for why not NIOHTTP2Handler). Header blocks are built from
                    // values checked when each request was made (hex tokens, bundle IDs, UUIDs), so
                    // they are not checked again per frame.
                    let framer = APNSHTTP2Framer(localSettings: Self.localSettings, allocator: channel.allocator)
                    try sync.addHandler(framer)
                    try sync.addHandler(loopBoundHandler.value)
                }
            }
            .connect(host: endpoint.host, port: endpoint.port)
        return (handler, connected.map { _ in })
    }

    private static func isIPAddress(_ host: String) -> Bool {
        (try? SocketAddress(ipAddress: host, port: 0)) != nil
    }
}
