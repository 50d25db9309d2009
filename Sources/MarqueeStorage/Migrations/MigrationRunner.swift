import Foundation
import Logging
import MarqueeCore

/// One database's side of migrating: its history table and applying one migration atomically.
/// The caller holds whatever lock keeps two replicas from migrating at once.
protocol MigrationTarget {
    /// Creates `schema_migrations` if missing and reads it.
    func appliedMigrations() async throws -> [AppliedMigration]
    /// Runs the statements and records the migration in one transaction. Returns false, changing
    /// nothing, if another process recorded the same migration in the meantime.
    func apply(_ migration: Migration, statements: [String], at: Date) async throws -> Bool
}

enum MigrationRunner {
    /// Checks the history against the files, then applies what is pending in version order.
    static func run(
        on target: some MigrationTarget,
        migrations: [Migration],
        clock: any WallClock,
        logger: Logger
    ) async throws -> MigrationReport {
        let plan = try MigrationPlan(available: migrations, applied: try await target.appliedMigrations())
        var applied: [Migration] = []
        for migration in plan.pending {
            try Task.checkCancellation()
            if try await target.apply(migration, statements: SQLScript.statements(in: migration.sql), at: clock.now) {
                logger.debug(
                    "applied migration",
                    metadata: ["migration.version": "\(migration.version)", "migration.name": "\(migration.name)"]
                )
                applied.append(migration)
            }
        }
        return MigrationReport(alreadyApplied: plan.applied, applied: applied)
    }

    /// The history and what is pending, changing nothing.
    static func plan(on target: some MigrationTarget, migrations: [Migration]) async throws -> MigrationPlan {
        try MigrationPlan(available: migrations, applied: try await target.appliedMigrations())
    }
}
