import Foundation
import Logging
import MarqueeCore
import NIOPosix
import SQLiteNIO

/// The embedded default store: one SQLite file (`./data/marquee.sqlite`) in WAL mode, so that one
/// binary runs with no setup. One connection is used by one task at a time (`SerialAccess`);
/// writes run in `BEGIN IMMEDIATE` transactions and wait out another process's writer through
/// `busy_timeout`.
///
/// Each store runs its connection on a thread of its own: SQLite waits out a busy lock by sleeping
/// in the calling thread, and on a shared pool two stores waiting for each other's file could take
/// every thread the lock holder needs to finish (seen with two stores on one file in one process).
public final class SQLiteStore: MarqueeStore {
    /// The embedded default location.
    public static let defaultPath = "./data/marquee.sqlite"

    let connection: SQLiteConnection
    private let threadPool: NIOThreadPool
    let access = SerialAccess()
    let configuration: StoreConfiguration
    var logger: Logger { configuration.logger }
    /// Told of every change to channel-ID answers after it commits (one process writes the file).
    public let channelAnswerChanges = ChannelAnswerChanges()

    private init(connection: SQLiteConnection, threadPool: NIOThreadPool, configuration: StoreConfiguration) {
        self.connection = connection
        self.threadPool = threadPool
        self.configuration = configuration
    }

    /// Opens (creating folder and file if needed) the database at `path`.
    ///
    /// - Parameter busyTimeout: how long a write waits for another connection's write transaction
    ///   to end. Those transactions span several statements, each a hop to the connection's thread,
    ///   so on a loaded machine one can hold the lock for seconds: 5 s failed writes that would have
    ///   gone through ("database is locked" in a test leasing jobs from two connections at load 7).
    public static func open(
        path: String = defaultPath,
        configuration: StoreConfiguration,
        busyTimeout: Duration = .seconds(30)
    ) async throws -> SQLiteStore {
        try PrivateFiles.prepare(databaseAt: path)
        let threadPool = NIOThreadPool(numberOfThreads: 1)
        threadPool.start()
        let connection: SQLiteConnection
        do {
            connection = try await SQLiteConnection.open(
                storage: .file(path: path),
                threadPool: threadPool,
                logger: configuration.logger,
                on: MultiThreadedEventLoopGroup.singleton.any()
            )
        } catch {
            try? await threadPool.shutdownGracefully()
            throw error
        }
        do {
            let timeoutMilliseconds = busyTimeout.wholeMilliseconds
            // The timeout first: switching to WAL waits for another process's writer too.
            _ = try await connection.query("PRAGMA busy_timeout = \(timeoutMilliseconds)")
            _ = try await connection.query("PRAGMA journal_mode = WAL")
            _ = try await connection.query("PRAGMA foreign_keys = ON")
            _ = try await connection.query("PRAGMA synchronous = NORMAL")
            // Deleted rows (idempotency answers, revoked keys' rows) are overwritten in the file
            // rather than left in free pages.
            _ = try await connection.query("PRAGMA secure_delete = ON")
        } catch {
            try? await connection.close()
            try? await threadPool.shutdownGracefully()
            throw error
        }
        return SQLiteStore(connection: connection, threadPool: threadPool, configuration: configuration)
    }

    public func close() async throws {
        try await access.withAccess { try await connection.close() }
        try await threadPool.shutdownGracefully()
    }

    public func migrate() async throws {
        _ = try await migrateReporting()
    }

    /// Applies pending migrations, each in its own `BEGIN IMMEDIATE` transaction.
    public func migrateReporting() async throws -> MigrationReport {
        let migrations = try configuration.migrations.migrations(for: .sqlite)
        return try await access.withAccess {
            try await MigrationRunner.run(
                on: SQLiteMigrationTarget(connection: connection),
                migrations: migrations,
                clock: configuration.clock,
                logger: logger
            )
        }
    }

    public func migrationPlan() async throws -> MigrationPlan {
        let migrations = try configuration.migrations.migrations(for: .sqlite)
        return try await access.withAccess {
            try await MigrationRunner.plan(on: SQLiteMigrationTarget(connection: connection), migrations: migrations)
        }
    }

    // MARK: Helpers shared by the concern files

    /// One statement in autocommit mode.
    func query(_ sql: String, _ binds: [SQLiteData] = []) async throws -> [SQLiteRow] {
        try await access.withAccess { try await connection.query(sql, binds) }
    }

    /// Runs `body` in a write transaction: committed if it returns, rolled back if it throws.
    func write<Result: Sendable>(_ body: (SQLiteConnection) async throws -> Result) async throws -> Result {
        try await access.withAccess {
            try await Self.transaction(on: connection, body)
        }
    }

    /// `BEGIN IMMEDIATE`, the body, then `COMMIT`, or `ROLLBACK` if anything failed.
    ///
    /// The transaction's end is sent whatever becomes of the caller's task: SQLiteNIO runs each
    /// statement through `NIOThreadPool.runIfActive`, which drops the statement of a cancelled task
    /// without running it. A task cancelled mid-transaction (a job run cut off by a stopping worker)
    /// once had its `ROLLBACK` dropped too, and the connection stayed in the transaction: every later
    /// write of the store failed with "cannot start a transaction within a transaction".
    static func transaction<Result: Sendable>(
        on connection: SQLiteConnection,
        _ body: (SQLiteConnection) async throws -> Result
    ) async throws -> Result {
        _ = try await connection.query("BEGIN IMMEDIATE")
        let result: Result
        do {
            result = try await body(connection)
            try await endTransaction("COMMIT", on: connection)
        } catch {
            try? await endTransaction("ROLLBACK", on: connection)
            throw error
        }
        return result
    }

    /// Sends `COMMIT` or `ROLLBACK` from a task of its own, which the caller's cancellation does not reach.
    private static func endTransaction(_ statement: String, on connection: SQLiteConnection) async throws {
        try await Task { _ = try await connection.query(statement) }.value
    }
}

extension SQLiteError {
    /// SQLITE_CONSTRAINT_UNIQUE or _PRIMARYKEY.
    var isUniqueViolation: Bool {
        reason == .constraintUniqueFailed || reason == .constraintPrimaryKeyFailed
    }
}

/// `schema_migrations` on the store's connection (the caller holds `SerialAccess`).
struct SQLiteMigrationTarget: MigrationTarget {
    let connection: SQLiteConnection

    func appliedMigrations() async throws -> [AppliedMigration] {
        _ = try await connection.query(
            """
            CREATE TABLE IF NOT EXISTS schema_migrations (
                version    integer PRIMARY KEY,
                name       text    NOT NULL,
                checksum   text    NOT NULL,
                applied_at integer NOT NULL
            )
            """
        )
        return try await connection.query(
            "SELECT version, name, checksum, applied_at FROM schema_migrations ORDER BY version"
        )
        .map { row in
            let columns = SQLiteColumns(row, entity: "schema migration")
            return AppliedMigration(
                version: try columns.int("version"),
                name: try columns.string("name"),
                checksum: try columns.string("checksum"),
                appliedAt: try columns.date("applied_at")
            )
        }
    }

    /// `BEGIN IMMEDIATE` is SQLite's migration lock: another process that migrated the same file
    /// first has recorded the migration by the time this transaction starts.
    func apply(_ migration: Migration, statements: [String], at: Date) async throws -> Bool {
        try await SQLiteStore.transaction(on: connection) { connection in
            let recorded = try await connection.query(
                "SELECT checksum FROM schema_migrations WHERE version = ?",
                [.int(migration.version)]
            ).first
            if let recorded {
                let checksum = try SQLiteColumns(recorded, entity: "schema migration").string("checksum")
                guard checksum == migration.checksum else {
                    throw MigrationError.checksumMismatch(
                        version: migration.version,
                        name: migration.name,
                        applied: checksum,
                        file: migration.checksum
                    )
                }
                return false
            }
            for (index, statement) in statements.enumerated() {
                do {
                    _ = try await connection.query(statement)
                } catch let error as SQLiteError {
                    throw MigrationError.statementFailed(
                        version: migration.version,
                        name: migration.name,
                        statement: index + 1,
                        underlying: error.message
                    )
                }
            }
            _ = try await connection.query(
                "INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES (?, ?, ?, ?)",
                [.int(migration.version), .text(migration.name), .text(migration.checksum), .date(at)]
            )
            return true
        }
    }
}
