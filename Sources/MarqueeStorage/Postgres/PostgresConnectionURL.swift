import Foundation
import Logging
import NIOPosix
import NIOSSL
import PostgresNIO

/// A `postgres://user:password@host:port/database?sslmode=...` URL as a client configuration.
/// `sslmode` is `disable`, `prefer` or `require` (the default, except on loopback hosts where it is
/// `disable`); certificates are verified against the system's trust roots.
public struct PostgresConnectionURL: Sendable {
    public let configuration: PostgresClient.Configuration
    let host: String
    let port: Int
    private let tlsConfiguration: TLSConfiguration?

    public init(_ string: String) throws(PostgresConnectionURLError) {
        guard let components = URLComponents(string: string),
            components.scheme == "postgres" || components.scheme == "postgresql",
            let host = components.host, !host.isEmpty,
            let user = components.user, !user.isEmpty
        else { throw .malformed }
        let database = String(components.path.drop(while: { $0 == "/" }))
        let loopback = host == "127.0.0.1" || host == "localhost" || host == "::1"
        let mode = components.queryItems?.first(where: { $0.name == "sslmode" })?.value ?? (loopback ? "disable" : "require")
        let tls: PostgresClient.Configuration.TLS
        switch mode {
        case "disable":
            tls = .disable
            tlsConfiguration = nil
        case "prefer":
            tls = .prefer(.makeClientConfiguration())
            tlsConfiguration = .makeClientConfiguration()
        case "require", "verify-full":
            tls = .require(.makeClientConfiguration())
            tlsConfiguration = .makeClientConfiguration()
        default: throw .unsupportedSSLMode(mode)
        }
        self.host = host
        self.port = components.port ?? 5432
        configuration = PostgresClient.Configuration(
            host: host,
            port: components.port ?? 5432,
            username: user.removingPercentEncoding ?? user,
            password: components.password.map { $0.removingPercentEncoding ?? $0 },
            database: database.isEmpty ? nil : database,
            tls: tls
        )
    }
}

extension PostgresConnectionURL {
    /// Opens and closes one connection: a wrong password or an unreachable server fails here at
    /// once with the server's own reason, where a pooled client would retry until its circuit
    /// breaker trips.
    public func checkConnection(logger: Logger) async throws {
        let tls: PostgresConnection.Configuration.TLS =
            switch tlsConfiguration {
            case nil: .disable
            case let configuration?: .require(try NIOSSLContext(configuration: configuration))
            }
        let connection = try await PostgresConnection.connect(
            on: MultiThreadedEventLoopGroup.singleton.any(),
            configuration: PostgresConnection.Configuration(
                host: host,
                port: port,
                username: configuration.username,
                password: configuration.password,
                database: configuration.database,
                tls: tls
            ),
            id: 0,
            logger: logger
        ).get()
        try await connection.close()
    }
}

/// Why a database URL was refused. Never repeats the URL, which may hold a password.
public enum PostgresConnectionURLError: Error, Sendable, Hashable, CustomStringConvertible {
    case malformed
    case unsupportedSSLMode(String)

    public var description: String {
        switch self {
        case .malformed: "the database URL is not of the form postgres://user:password@host:port/database"
        case .unsupportedSSLMode(let mode): "sslmode \(mode) is not supported (use disable, prefer or require)"
        }
    }
}
