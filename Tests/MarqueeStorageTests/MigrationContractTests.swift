import Foundation
import MarqueeCore
import MarqueeStorage
import MarqueeTesting
import Testing

@Suite("Migrations")
struct MigrationContractTests {
    @Test("migrating again applies nothing and keeps the history", arguments: Backend.allCases)
    func idempotent(backend: Backend) async throws {
        try await withMigrationsCopy { sqlRoot in
            try await withScratchStore(backend, sqlRoot: sqlRoot) { store in
                let migrations = try MigrationDirectory(root: sqlRoot).migrations(for: backend.dialect)
                let first = try await store.migrateReporting()
                #expect(first.applied.map(\.version) == migrations.map(\.version))
                let second = try await store.migrateReporting()
                #expect(second.applied.isEmpty)
                #expect(second.alreadyApplied.map(\.version) == migrations.map(\.version))
                #expect(second.alreadyApplied.map(\.checksum) == migrations.map(\.checksum))
            }
        }
    }

    @Test("replicas migrating at once apply each migration exactly once", arguments: Backend.allCases)
    func concurrentMigrations(backend: Backend) async throws {
        try await withMigrationsCopy { sqlRoot in
            try await withScratchStore(backend, sqlRoot: sqlRoot) { store in
                let reports = try await withThrowingTaskGroup(of: MigrationReport.self) { group in
                    for _ in 0..<4 { group.addTask { try await store.migrateReporting() } }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                let versions = try MigrationDirectory(root: sqlRoot).migrations(for: backend.dialect).map(\.version)
                #expect(reports.flatMap(\.applied).map(\.version).sorted() == versions)
                #expect(reports.filter { $0.applied.isEmpty }.count == 3)
            }
        }
    }

    @Test("an applied migration that was edited is refused with its name", arguments: Backend.allCases)
    func editedMigrationRefused(backend: Backend) async throws {
        try await withMigrationsCopy { sqlRoot in
            try await withScratchStore(backend, sqlRoot: sqlRoot) { store in
                try await store.migrate()
                let file = sqlRoot.appendingPathComponent("\(backend.dialect.rawValue)/0001_initial.sql")
                let edited = try String(contentsOf: file, encoding: .utf8) + "\n-- an innocent-looking edit\n"
                try edited.write(to: file, atomically: true, encoding: .utf8)
                let error = await #expect(throws: MigrationError.self) { try await store.migrate() }
                guard case .checksumMismatch(let version, let name, _, _) = error else {
                    Issue.record("expected a checksum mismatch, got \(String(describing: error))")
                    return
                }
                #expect(version == 1)
                #expect(name == "initial")
                #expect(error?.description.contains("edited after it was applied") == true)
            }
        }
    }

    @Test("a new migration file is applied after the existing ones", arguments: Backend.allCases)
    func newMigrationApplied(backend: Backend) async throws {
        try await withMigrationsCopy { sqlRoot in
            try await withScratchStore(backend, sqlRoot: sqlRoot) { store in
                try await store.migrate()
                try "CREATE TABLE release_notes (id integer PRIMARY KEY, body text NOT NULL);\n".write(
                    to: try nextMigrationFile(in: sqlRoot, backend, name: "release_notes").file,
                    atomically: true,
                    encoding: .utf8
                )
                let report = try await store.migrateReporting()
                #expect(report.applied.map(\.name) == ["release_notes"])
            }
        }
    }

    @Test("a failing migration is rolled back and not recorded", arguments: Backend.allCases)
    func failingMigrationRolledBack(backend: Backend) async throws {
        try await withMigrationsCopy { sqlRoot in
            try await withScratchStore(backend, sqlRoot: sqlRoot) { store in
                try await store.migrate()
                let (version, file) = try nextMigrationFile(in: sqlRoot, backend, name: "broken")
                try """
                CREATE TABLE half_done (id integer PRIMARY KEY);
                INSERT INTO no_such_table VALUES (1);
                """.write(
                    to: file,
                    atomically: true,
                    encoding: .utf8
                )
                let error = await #expect(throws: MigrationError.self) { try await store.migrate() }
                guard case .statementFailed(version, "broken", 2, _) = error else {
                    Issue.record("expected statement 2 of the new migration to fail, got \(String(describing: error))")
                    return
                }
                // Fixing the file lets it apply: nothing of the failed attempt was left behind
                // (the CREATE TABLE of statement 1 would collide otherwise).
                try "CREATE TABLE half_done (id integer PRIMARY KEY);\n".write(
                    to: file,
                    atomically: true,
                    encoding: .utf8
                )
                let report = try await store.migrateReporting()
                #expect(report.applied.map(\.version) == [version])
            }
        }
    }
}

extension Backend {
    var dialect: MigrationDirectory.Dialect {
        switch self {
        case .sqlite: .sqlite
        case .postgres: .postgres
        }
    }
}

/// The number after the last migration in `sqlRoot`, and the file a migration `name` with it goes in.
func nextMigrationFile(in sqlRoot: URL, _ backend: Backend, name: String) throws -> (version: Int, file: URL) {
    let next = (try MigrationDirectory(root: sqlRoot).migrations(for: backend.dialect).last?.version ?? 0) + 1
    let number = String(repeating: "0", count: max(0, 4 - String(next).count)) + String(next)
    return (next, sqlRoot.appendingPathComponent("\(backend.dialect.rawValue)/\(number)_\(name).sql"))
}

/// A copy of the repository's `sql/` that a test may edit.
func withMigrationsCopy(_ body: (URL) async throws -> Void) async throws {
    try await withTemporaryDirectory { folder in
        let copy = folder.appendingPathComponent("sql")
        try FileManager.default.copyItem(at: MigrationDirectory.sources.root, to: copy)
        try await body(copy)
    }
}

/// Both stores expose the migration report; this is the part of them the migration tests use.
protocol MigratingStore: Sendable {
    func migrate() async throws
    func migrateReporting() async throws -> MigrationReport
}

extension SQLiteStore: MigratingStore {}
extension PostgresStore: MigratingStore {}

/// An empty, unmigrated database reading its migrations from `sqlRoot`.
func withScratchStore(_ backend: Backend, sqlRoot: URL, _ body: (any MigratingStore) async throws -> Void) async throws
{
    let configuration = StoreConfiguration(
        sealer: nil,
        migrations: MigrationDirectory(root: sqlRoot),
        clock: ManualWallClock()
    )
    switch backend {
    case .sqlite:
        try await withTemporaryDirectory { folder in
            let store = try await SQLiteStore.open(
                path: folder.appendingPathComponent("scratch.sqlite").path,
                configuration: configuration
            )
            do {
                try await body(store)
                try await store.close()
            } catch {
                try? await store.close()
                throw error
            }
        }
    case .postgres:
        try await PostgresTestCluster.withDatabase(migrated: false) { postgres in
            try await withRunningClient(postgres) { client in
                try await body(PostgresStore(client: client, configuration: configuration))
            }
        }
    }
}
