import Foundation
import Logging
import MarqueeCore
import MarqueeStorage
import PostgresNIO

/// The throwaway PostgreSQL that `scripts/test` starts (scripts/with-postgres), from its
/// environment variables, and the test databases on it: one copy per test of a template migrated
/// once per test process, so that a test neither runs the migrations nor waits for another's.
///
/// Its user is trusted on loopback (no password checked: no SCRAM rounds per connection); a second
/// user, `scramUser`, authenticates with a password as production does.
public struct PostgresTestCluster: Sendable {
    public var host: String
    public var port: Int
    public var user: String
    public var password: String
    public var adminDatabase: String
    /// The user that must authenticate with SCRAM-SHA-256, and its password.
    public var scramUser: String?
    public var scramPassword: String?

    /// Connections a test's pool may open: enough for the concurrency tests to contend on several
    /// connections, few enough for every test running at once to stay well under the cluster's
    /// max_connections.
    public static let testPoolSize = 4

    public static func fromEnvironment() throws -> PostgresTestCluster {
        let environment = ProcessInfo.processInfo.environment
        guard let host = environment["POSTGRES_HOST"], let port = environment["POSTGRES_PORT"].flatMap(Int.init),
            let user = environment["POSTGRES_USER"], let password = environment["POSTGRES_PASSWORD"],
            let database = environment["POSTGRES_DATABASE"]
        else {
            throw TestSetupError(
                """
                POSTGRES_HOST/PORT/USER/PASSWORD/DATABASE are not set: run the suite with scripts/test, which \
                starts a throwaway PostgreSQL
                """
            )
        }
        return PostgresTestCluster(
            host: host,
            port: port,
            user: user,
            password: password,
            adminDatabase: database,
            scramUser: environment["POSTGRES_SCRAM_USER"],
            scramPassword: environment["POSTGRES_SCRAM_PASSWORD"]
        )
    }

    /// `database.url` for `database`, as the trusted user.
    public func url(database: String) -> String {
        Self.url(user: user, password: password, host: host, port: port, database: database)
    }

    /// `database.url` for `database` as the user that authenticates with a password.
    public func passwordURL(database: String) throws -> String {
        guard let scramUser, let scramPassword else {
            throw TestSetupError(
                "POSTGRES_SCRAM_USER/PASSWORD are not set: run the suite with scripts/test (scripts/with-postgres)"
            )
        }
        return Self.url(user: scramUser, password: scramPassword, host: host, port: port, database: database)
    }

    private static func url(user: String, password: String, host: String, port: Int, database: String) -> String {
        let escapedPassword = password.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? password
        return "postgres://\(user):\(escapedPassword)@\(host):\(port)/\(database)?sslmode=disable"
    }

    /// A client configuration for `database` (the admin database by default) with a test's pool.
    public func configuration(database: String? = nil) -> PostgresClient.Configuration {
        var configuration = PostgresClient.Configuration(
            host: host,
            port: port,
            username: user,
            password: password,
            database: database ?? adminDatabase,
            tls: .disable
        )
        configuration.options.maximumConnections = Self.testPoolSize
        return configuration
    }

    /// Runs `body` on a database of its own, dropped afterwards: a copy of the migrated template,
    /// or with `migrated: false` an empty one (for the migration tests).
    public func withDatabase<Result: Sendable>(
        migrated: Bool = true,
        _ body: (_ name: String) async throws -> Result
    ) async throws -> Result {
        let template = migrated ? try await PostgresTemplate.shared.name(on: self) : nil
        let name = Self.uniqueName("marquee_t")
        // WAL_LOG (PostgreSQL 15's default, spelled out): the copy goes through the WAL, where
        // FILE_COPY would force two checkpoints of the whole cluster per test.
        try await admin("CREATE DATABASE \(name) TEMPLATE \(template ?? "template0") STRATEGY = WAL_LOG")
        do {
            let result = try await body(name)
            try? await admin("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
            return result
        } catch {
            try? await admin("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
            throw error
        }
    }

    static func uniqueName(_ prefix: String) -> String {
        "\(prefix)_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(16))"
    }

    /// Runs `sql` on the admin database. The template's last connection may still be closing when
    /// the first copy is asked for (55006, "being accessed by other users"), and a loaded machine
    /// refuses a connection now and then: those are tried again, a few times, and the last failure
    /// is told in full.
    func admin(_ sql: String) async throws {
        var attempt = 1
        while true {
            do {
                return try await Self.withRunningClient(configuration()) { client in
                    try await client.query(PostgresQuery(unsafeSQL: sql))
                }
            } catch let error as PSQLError where error.serverInfo?[.sqlState] == "42P04" && attempt > 1 {
                return  // an earlier attempt created it, and its answer was lost
            } catch {
                guard attempt < 20, Self.mayPass(error) else {
                    throw TestSetupError("\(sql) failed \(attempt) times, last: \(String(reflecting: error))")
                }
                try await Task.sleep(for: .milliseconds(100 * min(attempt, 10)))
                attempt += 1
            }
        }
    }

    /// Whether trying again may help: anything but the server's own refusal, unless that says
    /// the template is in use (55006), the server is starting or stopping (57P03, 57P01) or out of
    /// connections (53300).
    private static func mayPass(_ error: any Error) -> Bool {
        guard let error = error as? PSQLError, error.code == .server else { return true }
        return ["55006", "57P03", "57P01", "53300"].contains(error.serverInfo?[.sqlState] ?? "")
    }

    /// Runs a `PostgresClient` for the duration of `body`.
    public static func withRunningClient<Result: Sendable>(
        _ configuration: PostgresClient.Configuration,
        _ body: (PostgresClient) async throws -> Result
    ) async throws -> Result {
        let client = PostgresClient(configuration: configuration)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            return try await body(client)
        }
    }
}

/// The migrated template of this test process, made by the first test that needs it.
actor PostgresTemplate {
    static let shared = PostgresTemplate()

    private var template: Task<String, any Error>?

    func name(on cluster: PostgresTestCluster) async throws -> String {
        if let template { return try await template.value }
        let task = Task<String, any Error> {
            let name = PostgresTestCluster.uniqueName("marquee_template")
            try await cluster.admin("CREATE DATABASE \(name) TEMPLATE template0")
            try await PostgresTestCluster.withRunningClient(cluster.configuration(database: name)) { client in
                let migrations = MigrationDirectory(
                    root: URL(fileURLWithPath: SourceTree.sqlDirectory, isDirectory: true)
                )
                try await PostgresStore(
                    client: client,
                    configuration: StoreConfiguration(sealer: nil, migrations: migrations)
                ).migrate()
            }
            return name
        }
        template = task
        do {
            return try await task.value
        } catch {
            // The next test tries again rather than failing with this one's reason.
            template = nil
            throw error
        }
    }
}
