import MarqueeCore

/// Where one family of APNs requests goes: host, port and transport security.
public struct APNSEndpoint: Sendable, Hashable {
    public var host: String
    public var port: Int
    public var security: Security

    /// How the connection is secured.
    public enum Security: Sendable, Hashable {
        /// TLS 1.2+ with ALPN `h2`, verified against `trustRoots`.
        case tls(trustRoots: TrustRoots = .system)
        /// Cleartext HTTP/2 (h2c, prior knowledge): local targets such as an emulator or a benchmark sink.
        case cleartext
    }

    /// The certificates a TLS server must chain to.
    public enum TrustRoots: Sendable, Hashable {
        /// The system's trust store (APNs chains to USERTrust RSA).
        case system
        /// A PEM file of CA certificates, for an emulator or a private gateway.
        case pemFile(String)
        /// PEM text of CA certificates.
        case pem(String)
    }

    public init(host: String, port: Int, security: Security = .tls()) {
        self.host = host
        self.port = port
        self.security = security
    }

    /// Apple's device-push and broadcast host for `environment`, on 443.
    public static func push(_ environment: APNSEnvironment) -> APNSEndpoint {
        APNSEndpoint(host: environment.pushHost, port: 443)
    }

    /// Apple's channel-management host for `environment`, on 2195 (sandbox) or 2196 (production).
    public static func channelManagement(_ environment: APNSEnvironment) -> APNSEndpoint {
        APNSEndpoint(host: environment.channelManagementHost, port: environment.channelManagementPort)
    }

    var scheme: String {
        switch security {
        case .tls: "https"
        case .cleartext: "http"
        }
    }

    /// `:authority`: the host, with the port when it is not the scheme's default.
    var authority: String {
        let defaultPort = if case .tls = security { 443 } else { 80 }
        return port == defaultPort ? host : "\(host):\(port)"
    }
}
