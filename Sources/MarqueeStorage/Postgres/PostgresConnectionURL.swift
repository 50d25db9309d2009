import Foundation
import NIOSSL
import PostgresNIO

/// A `postgres://user:password@host:port/database?sslmode=...` URL as a client configuration.
/// `sslmode` is `disable`, `prefer` or `require` (the default, except on loopback hosts where it is
/// `disable`); certificates are verified against the system's trust roots.
public struct PostgresConnectionURL: Sendable {
    public let configuration: PostgresClient.Configuration

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
        case "disable": tls = .disable
        case "prefer": tls = .prefer(.makeClientConfiguration())
        case "require", "verify-full": tls = .require(.makeClientConfiguration())
        default: throw .unsupportedSSLMode(mode)
        }
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
