import Foundation
import Logging
import MarqueeCore
import PostgresNIO

/// The production store: PostgreSQL through a pooled `PostgresClient`, shared by every replica.
/// Queries bind every value as a parameter (PostgresNIO's interpolation); rows that several
/// replicas race for are claimed with `ON CONFLICT`, conditional updates or `FOR UPDATE SKIP LOCKED`.
///
/// The client must be running (`client.run()` in a task group or service group) while the store is used.
/// Each call has a deadline (`PostgresCallDeadline`): past it the caller gets `StoreCallTimedOut`.
public struct PostgresStore: MarqueeStore {
    public let client: PostgresClient
    let configuration: StoreConfiguration
    let deadline: PostgresCallDeadline
    /// Told of this process's changes to channel-ID answers after they commit; the server's
    /// listener tells it of other replicas' (their NOTIFYs on `channelAnswersChannel`).
    public let channelAnswerChanges = ChannelAnswerChanges()
    var logger: Logger { configuration.logger }

    /// The deadline on each call when none is configured: far above any query Marquee makes, and
    /// well inside a job's lease, so a lost call ends the run's wait while its part can still be
    /// handed back in an orderly way.
    public static let defaultCallTimeout: Duration = .seconds(30)

    public init(
        client: PostgresClient,
        configuration: StoreConfiguration,
        callTimeout: Duration = Self.defaultCallTimeout
    ) {
        self.client = client
        self.configuration = configuration
        deadline = PostgresCallDeadline(limit: callTimeout)
    }

    public func migrate() async throws {
        _ = try await migrateReporting()
    }

    /// Applies pending migrations under an advisory lock, so replicas starting together migrate once.
    public func migrateReporting() async throws -> MigrationReport {
        let migrations = try configuration.migrations.migrations(for: .postgres)
        return try await withMigrationLock { connection in
            try await MigrationRunner.run(
                on: PostgresMigrationTarget(connection: connection, logger: logger),
                migrations: migrations,
                clock: configuration.clock,
                logger: logger
            )
        }
    }

    /// The history and what is pending, changing nothing.
    public func migrationPlan() async throws -> MigrationPlan {
        let migrations = try configuration.migrations.migrations(for: .postgres)
        return try await client.withConnection { connection in
            try await MigrationRunner.plan(
                on: PostgresMigrationTarget(connection: connection, logger: logger),
                migrations: migrations
            )
        }
    }

    /// An arbitrary constant naming Marquee's migration lock among the database's advisory locks.
    static let migrationLockKey: Int64 = 0x4D41_5251_5545_4531  // "MARQUEE1"
    /// Another, naming the turn leases take (`leaseJobs`).
    static let leaseLockKey: Int64 = 0x4D41_5251_5545_4532  // "MARQUEE2"
    /// The LISTEN/NOTIFY channel on which enqueued jobs are announced (payload: the job's kind).
    public static let jobsChannel = "marquee_jobs"
    /// The LISTEN/NOTIFY channel on which a change to an API key or an app is announced (at its
    /// commit, no payload): every replica forgets the keys it authenticated (`CredentialCache`).
    public static let credentialsChannel = "marquee_credentials"
    /// The LISTEN/NOTIFY channel on which a change to an event's channel-ID answer is announced
    /// (at its commit; payload: the event's ID, empty for any event): every replica forgets what
    /// it remembered of the event's answer (`ChannelAnswerChanges`).
    public static let channelAnswersChannel = "marquee_channel_answers"

    /// A RETURNING column that announces the channel-ID answer of the row's event (`event_id`) on
    /// `channelAnswersChannel` at the statement's commit; rows of no event announce nothing.
    static let notifyChannelAnswer =
        "CASE WHEN event_id IS NOT NULL THEN pg_notify('\(channelAnswersChannel)', event_id::text) END"
    /// The same for a row of `events`, whose own ID is the event's.
    static let notifyEventChannelAnswer = "pg_notify('\(channelAnswersChannel)', id::text)"
    /// The same for a row of `schedules`: only a timeline's `close` step gives an answer anything
    /// (`ChannelAnswerChanges.concerns`).
    static let notifyScheduleChannelAnswer =
        """
        CASE WHEN kind = 'close' AND origin = 'timeline' THEN pg_notify('\(channelAnswersChannel)', \
        event_id::text) END
        """

    private func withMigrationLock<Result: Sendable>(
        _ body: (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        try await client.withConnection { connection in
            try await connection.query("SELECT pg_advisory_lock(\(Self.migrationLockKey))", logger: logger)
            do {
                let result = try await body(connection)
                try await connection.query("SELECT pg_advisory_unlock(\(Self.migrationLockKey))", logger: logger)
                return result
            } catch {
                _ = try? await connection.query("SELECT pg_advisory_unlock(\(Self.migrationLockKey))", logger: logger)
                throw error
            }
        }
    }

    // MARK: Helpers shared by the concern files

    func rows(_ query: PostgresQuery) async throws -> [PostgresRow] {
        try await deadline.run { [client, logger] in
            try await client.query(query, logger: logger).collect()
        }
    }

    /// The rows of a statement over a whole audience (an event's funnel, a start's audience extent),
    /// planned without parallel workers and run without JIT compilation.
    ///
    /// PostgreSQL's planner prices a parallel scan by the time it saves, not the CPU it spends: with
    /// the start ledger at 600,000 entries it chose a parallel scan of the whole ledger for a
    /// 100,000-device event's counts (53 ms on three processes, about 150 ms of CPU), where alone it
    /// reads the event's entries through the primary key (30 ms on one). These statements run every
    /// minute on every replica for every live event (`FunnelReporter`) and at every start, on the
    /// cores the request path needs at kick-off, and their cost grew with every start of the day
    /// (RELIABILITY.md, the match-day soak).
    ///
    /// Their estimated costs pass `jit_above_cost` (an audience's count is priced at 586,000 for
    /// its probe of the ledger per token, which the statement skips when the event has no entries),
    /// and JIT compilation is a cost paid in full at every execution: in a match-day soak a start's
    /// audience extent took 704 ms, 640 of them compiling (12 functions, inlined and optimized),
    /// where the same count without it took 85–132 ms (`EXPLAIN ANALYZE`, 100,000 of 130,000 tokens).
    func wholeAudienceRows(_ query: PostgresQuery) async throws -> [PostgresRow] {
        try await transaction { [logger] connection in
            _ = try await connection.query(
                "SELECT set_config('max_parallel_workers_per_gather', '0', true), set_config('jit', 'off', true)",
                logger: logger
            ).collect()
            return try await connection.query(query, logger: logger).collect()
        }
    }

    /// The rows of a prepared statement, which each pooled connection prepares once.
    func rows<Statement: PostgresPreparedStatement>(_ statement: Statement) async throws -> [PostgresRow]
    where Statement.Row == PostgresRow {
        try await deadline.run { [client, logger] in
            var rows: [PostgresRow] = []
            for try await row in try await client.execute(statement, logger: logger) {
                rows.append(row)
            }
            return rows
        }
    }

    /// Runs a statement whose rows, if any, are not needed.
    func execute(_ query: PostgresQuery) async throws {
        _ = try await rows(query)
    }

    func firstRow(_ query: PostgresQuery) async throws -> PostgresRow? {
        try await rows(query).first
    }

    func transaction<Result: Sendable>(
        _ body: @escaping @Sendable (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        try await deadline.run { [client, logger] in
            try await PostgresTransactions.surfacingClosureError {
                try await client.withTransaction(logger: logger) { connection in
                    try await body(connection)
                }
            }
        }
    }
}

/// `schema_migrations` on one connection.
struct PostgresMigrationTarget: MigrationTarget {
    let connection: PostgresConnection
    let logger: Logger

    func appliedMigrations() async throws -> [AppliedMigration] {
        try await connection.query(
            """
            CREATE TABLE IF NOT EXISTS schema_migrations (
                version    integer     PRIMARY KEY,
                name       text        NOT NULL,
                checksum   text        NOT NULL,
                applied_at timestamptz NOT NULL
            )
            """,
            logger: logger
        )
        var applied: [AppliedMigration] = []
        let rows = try await connection.query(
            "SELECT version, name, checksum, applied_at FROM schema_migrations ORDER BY version",
            logger: logger
        )
        for try await (version, name, checksum, appliedAt) in rows.decode((Int, String, String, Date).self) {
            applied.append(AppliedMigration(version: version, name: name, checksum: checksum, appliedAt: appliedAt))
        }
        return applied
    }

    /// The advisory lock keeps other replicas out while this runs, so the migration is still pending.
    func apply(_ migration: Migration, statements: [String], at: Date) async throws -> Bool {
        try await PostgresTransactions.surfacingClosureError {
            try await apply(migration, statements: statements, at: at, on: connection)
        }
        return true
    }

    private func apply(
        _ migration: Migration,
        statements: [String],
        at: Date,
        on connection: PostgresConnection
    ) async throws {
        try await connection.withTransaction(logger: logger) { connection in
            for (index, statement) in statements.enumerated() {
                do {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                } catch let error as PSQLError {
                    throw MigrationError.statementFailed(
                        version: migration.version,
                        name: migration.name,
                        statement: index + 1,
                        underlying: error.serverInfo?[.message] ?? String(describing: error.code)
                    )
                }
            }
            try await connection.query(
                """
                INSERT INTO schema_migrations (version, name, checksum, applied_at)
                VALUES (\(migration.version), \(migration.name), \(migration.checksum), \(at))
                """,
                logger: logger
            )
        }
    }
}

enum PostgresTransactions {
    /// PostgresNIO wraps whatever a transaction's closure threw in `PostgresTransactionError`; the
    /// store's callers expect the domain error itself (`StoreError`, `MigrationError`). The
    /// transaction has been rolled back either way.
    static func surfacingClosureError<Result>(_ body: () async throws -> Result) async throws -> Result {
        do {
            return try await body()
        } catch let error as PostgresTransactionError {
            if let closureError = error.closureError { throw closureError }
            throw error
        }
    }
}
