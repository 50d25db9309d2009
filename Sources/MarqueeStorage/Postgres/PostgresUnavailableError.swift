import PostgresNIO

/// PostgreSQL could not be used at start (unreachable, refused the login, failed a query):
/// names the target and PostgresNIO's full reason, never the password. `PSQLError`'s own
/// description is deliberately generic, which tells an operator nothing.
public struct PostgresUnavailableError: Error, Sendable, CustomStringConvertible {
    public let target: String
    public let reason: String

    public init(target: PostgresConnectionURL, underlying: any Error) {
        self.target = target.displayName
        reason = String(reflecting: underlying)
    }

    public var description: String { "cannot use PostgreSQL at \(target): \(reason)" }
}

extension PostgresConnectionURL {
    /// `host:port/database`: where the store is, for the start-up banner.
    public var location: String {
        "\(host):\(port)/\(configuration.database ?? "")"
    }

    /// `host:port/database as user`: where the store is and who logs in, for messages (no password).
    public var displayName: String {
        "\(location) as \(configuration.username)"
    }
}
