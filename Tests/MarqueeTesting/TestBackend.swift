import Foundation
import Logging
import PostgresNIO

/// The two stores every service test runs against.
public enum TestBackend: String, CaseIterable, Sendable, CustomStringConvertible {
    case sqlite
    case postgres

    public var description: String { rawValue }

    /// A fresh, empty database of this backend for one test: its `database.url` (nil for SQLite,
    /// whose file lives in the test's data folder), dropped afterwards.
    public func withDatabase<Result: Sendable>(_ body: (String?) async throws -> Result) async throws -> Result {
        switch self {
        case .sqlite:
            return try await body(nil)
        case .postgres:
            let server = try PostgresTestServer.fromEnvironment()
            let name = "marquee_api_\(UUID().uuidString.prefix(8).lowercased())"
            try await server.admin("CREATE DATABASE \(name)")
            do {
                let result = try await body(server.url(database: name))
                try? await server.admin("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
                return result
            } catch {
                try? await server.admin("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
                throw error
            }
        }
    }
}

/// The throwaway PostgreSQL that `scripts/test` starts, from its environment variables.
struct PostgresTestServer {
    var host: String
    var port: Int
    var user: String
    var password: String
    var adminDatabase: String

    static func fromEnvironment() throws -> PostgresTestServer {
        let environment = ProcessInfo.processInfo.environment
        guard let host = environment["POSTGRES_HOST"], let port = environment["POSTGRES_PORT"].flatMap(Int.init),
            let user = environment["POSTGRES_USER"], let password = environment["POSTGRES_PASSWORD"],
            let database = environment["POSTGRES_DATABASE"]
        else {
            throw TestSetupError(
                "POSTGRES_HOST/PORT/USER/PASSWORD/DATABASE are not set: run the suite with scripts/test, which starts a throwaway PostgreSQL"
            )
        }
        return PostgresTestServer(host: host, port: port, user: user, password: password, adminDatabase: database)
    }

    func url(database: String) -> String {
        let escapedPassword = password.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? password
        return "postgres://\(user):\(escapedPassword)@\(host):\(port)/\(database)?sslmode=disable"
    }

    /// Runs `sql` on the admin database. A loaded machine makes the suite's many `CREATE
    /// DATABASE`s collide now and then (a connection refused or timed out, template1 in use), so a
    /// failure is tried again a few times, and the last one is told in full.
    func admin(_ sql: String) async throws {
        var attempt = 1
        while true {
            do {
                return try await adminOnce(sql)
            } catch {
                guard attempt < 5 else { throw TestSetupError("\(sql) failed \(attempt) times, last: \(String(reflecting: error))") }
                try await Task.sleep(for: .milliseconds(250 * attempt))
                attempt += 1
            }
        }
    }

    private func adminOnce(_ sql: String) async throws {
        let configuration = PostgresClient.Configuration(
            host: host,
            port: port,
            username: user,
            password: password,
            database: adminDatabase,
            tls: .disable
        )
        let client = PostgresClient(configuration: configuration)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            try await client.query(PostgresQuery(unsafeSQL: sql))
        }
    }
}

public struct TestSetupError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
