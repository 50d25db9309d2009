import ArgumentParser
import Foundation
import Logging
import MarqueeCore
import MarqueeStorage
import PostgresNIO

/// `marquee migrate`: applies the forward-only migrations of `sql/` to PostgreSQL or SQLite.
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Applies pending SQL migrations and prints what is applied and pending.",
        discussion: """
            Without --database-url, migrates the embedded SQLite database. Each applied migration is \
            recorded with its SHA-256; an applied migration whose file was edited is refused.
            """
    )

    @Option(
        name: .customLong("database-url"),
        help: "postgres://user:password@host:port/database[?sslmode=disable|prefer|require]; also MARQUEE_DATABASE_URL."
    )
    var databaseURL: String?

    @Option(name: .customLong("sqlite"), help: "The SQLite database file, used when no database URL is given.")
    var sqlitePath: String = SQLiteStore.defaultPath

    @Option(
        name: .customLong("sql-dir"),
        help: "The folder holding postgres/ and sqlite/ (default: MARQUEE_SQL_DIR or ./sql)."
    )
    var sqlDirectory: String?

    @Flag(name: .customLong("status"), help: "Only print applied and pending migrations; change nothing.")
    var statusOnly = false

    @Option(
        name: .customLong("wait"),
        help: ArgumentHelp(
            """
            Seconds to keep trying while PostgreSQL is unreachable or starting up, with growing pauses; 0 fails \
            at once.
            """,
            discussion:
                """
                As marquee serve's database.startupWaitSeconds: a deployment may run migrate beside a database \
                that is still starting.
                """
        )
    )
    var waitSeconds: Int = 60

    func validate() throws {
        guard waitSeconds >= 0 else { throw ValidationError("--wait takes seconds, 0 or more") }
    }

    func run() async throws {
        let migrations =
            sqlDirectory.map { MigrationDirectory(root: URL(fileURLWithPath: $0, isDirectory: true)) }
            ?? .resolved()
        // Migrations touch no secrets: no master key is needed.
        let configuration = StoreConfiguration(
            sealer: nil,
            migrations: migrations,
            logger: Logger(label: "marquee.migrate")
        )
        do {
            if let url = databaseURL ?? ProcessInfo.processInfo.environment["MARQUEE_DATABASE_URL"] {
                try await migratePostgres(url: url, configuration: configuration)
            } else {
                try await migrateSQLite(configuration: configuration)
            }
        } catch let error as MigrationError {
            throw MigrateFailure(message: "migration refused: \(error)")
        } catch let error as PostgresConnectionURLError {
            throw MigrateFailure(message: error.description)
        }
    }

    private func migratePostgres(url: String, configuration: StoreConfiguration) async throws {
        let target = try PostgresConnectionURL(url)
        do {
            try await target.retryingWhileUnavailable(patience: .seconds(waitSeconds), logger: configuration.logger) {
                try await target.checkConnection(logger: configuration.logger)
            }
            try await migratePostgres(target.configuration, configuration: configuration)
        } catch let error as MigrationError {
            throw error
        } catch {
            throw MigrateFailure(message: PostgresUnavailableError(target: target, underlying: error).description)
        }
    }

    private func migratePostgres(
        _ connection: PostgresClient.Configuration,
        configuration: StoreConfiguration
    ) async throws {
        let client = PostgresClient(configuration: connection)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            let store = PostgresStore(client: client, configuration: configuration)
            print("PostgreSQL, migrations from \(configuration.migrations.root.path)/postgres")
            if statusOnly {
                Self.report(try await store.migrationPlan())
            } else {
                Self.report(try await store.migrateReporting())
            }
        }
    }

    private func migrateSQLite(configuration: StoreConfiguration) async throws {
        let store = try await SQLiteStore.open(path: sqlitePath, configuration: configuration)
        print("SQLite \(sqlitePath), migrations from \(configuration.migrations.root.path)/sqlite")
        do {
            if statusOnly {
                Self.report(try await store.migrationPlan())
            } else {
                Self.report(try await store.migrateReporting())
            }
            try await store.close()
        } catch {
            try? await store.close()
            throw error
        }
    }

    private static func report(_ plan: MigrationPlan) {
        for migration in plan.applied { Swift.print("  applied  \(label(migration.version, migration.name))") }
        for migration in plan.pending { Swift.print("  pending  \(label(migration.version, migration.name))") }
        if plan.pending.isEmpty { Swift.print("up to date") }
    }

    private static func report(_ report: MigrationReport) {
        for migration in report.alreadyApplied { Swift.print("  applied  \(label(migration.version, migration.name))") }
        for migration in report.applied {
            Swift.print("  applying \(label(migration.version, migration.name)) ... done")
        }
        Swift.print(report.applied.isEmpty ? "up to date" : "applied \(report.applied.count) migration(s)")
    }

    private static func label(_ version: Int, _ name: String) -> String {
        let digits = String(version)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits + "_" + name
    }
}

/// A refusal `marquee migrate` reports as one line on stderr with a non-zero exit, without usage.
struct MigrateFailure: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
