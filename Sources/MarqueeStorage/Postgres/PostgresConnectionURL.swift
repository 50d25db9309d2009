import Foundation
import Logging
import MarqueeCore
import NIOPosix
import NIOSSL
import PostgresNIO
import _ConnectionPoolModule

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
        let mode =
            components.queryItems?.first(where: { $0.name == "sslmode" })?.value ?? (loopback ? "disable" : "require")
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
        var configuration = PostgresClient.Configuration(
            host: host,
            port: components.port ?? 5432,
            username: user.removingPercentEncoding ?? user,
            password: components.password.map { $0.removingPercentEncoding ?? $0 },
            database: database.isEmpty ? nil : database,
            tls: tls
        )
        self.configuration = configuration
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

extension PostgresConnectionURL {
    /// Runs `operation` (a start's first uses of PostgreSQL: the connection check, the migrations
    /// through the pool), again while its failure is one that waiting may mend: a replica that
    /// starts beside its database (Compose, a rolling restart) or while it is busy waits up to
    /// `patience` with growing pauses. A refusal that waiting cannot mend (a wrong password, no
    /// such database) fails at once. The operation must be safe to run again.
    public func retryingWhileUnavailable<Result>(
        patience: Duration,
        logger: Logger,
        _ operation: () async throws -> Result
    ) async throws -> Result {
        let clock = ContinuousClock()
        let deadline = clock.now + patience
        var failures = 0
        while true {
            let pause = Duration.backoff(initial: .milliseconds(250), maximum: .seconds(5), step: failures + 1)
            do {
                return try await operation()
            } catch  where Self.isTransient(error) && clock.now + pause < deadline {
                logger.warning(
                    "PostgreSQL is not reachable yet; trying again",
                    metadata: [
                        "database": "\(displayName)", "error": "\(String(reflecting: error))", "retry_in": "\(pause)",
                    ]
                )
                try await Task.sleep(for: pause)
                failures += 1
            }
        }
    }

    /// Whether waiting may help: the server unreachable or slow to answer, starting up, shutting
    /// down or out of connections, or the pool's circuit breaker open after its connection
    /// attempts failed for a while (it keeps trying behind it).
    static func isTransient(_ error: any Error) -> Bool {
        if let error = error as? ConnectionPoolError { return error == .connectionCreationCircuitBreakerTripped }
        guard let error = error as? PSQLError else { return false }
        if error.code == .connectionError || error.code == .serverClosedConnection
            || error.code == .clientClosedConnection
        {
            return true
        }
        guard error.code == .server, let state = error.serverInfo?[.sqlState] else { return false }
        // 57P03 cannot_connect_now (starting up), 57P01 admin_shutdown, 53300 too_many_connections.
        return ["57P03", "57P01", "53300"].contains(state)
    }
}
