import Foundation

/// The two stores every service test runs against.
public enum TestBackend: String, CaseIterable, Sendable, CustomStringConvertible {
    case sqlite
    case postgres

    public var description: String { rawValue }

    /// A fresh database of this backend for one test, dropped afterwards: its `database.url` (nil
    /// for SQLite, whose file lives in the test's data folder) and, on PostgreSQL, the URL of the
    /// same database for the user that authenticates with a password. On PostgreSQL it is a copy of
    /// the migrated template (see `PostgresTestCluster`); on SQLite the server migrates the file.
    public func withDatabase<Result: Sendable>(
        _ body: (_ url: String?, _ passwordURL: String?) async throws -> Result
    ) async throws -> Result {
        switch self {
        case .sqlite:
            return try await body(nil, nil)
        case .postgres:
            let cluster = try PostgresTestCluster.fromEnvironment()
            return try await cluster.withDatabase { name in
                try await body(cluster.url(database: name), try? cluster.passwordURL(database: name))
            }
        }
    }
}

public struct TestSetupError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
