import Foundation
import MarqueeCore
import SQLiteNIO
import Testing

@testable import MarqueeStorage

/// What only the embedded store has to show: its file mode, and several processes (here: several
/// connections) sharing one file.
@Suite("SQLite store")
struct SQLiteStoreTests {
    @Test("the database runs in WAL mode with foreign keys enforced")
    func pragmas() async throws {
        try await withTemporaryDirectory { folder in
            try await withSQLiteStores(1, path: folder.appendingPathComponent("nested/marquee.sqlite").path) { stores in
                let journal = try await stores[0].query("PRAGMA journal_mode")
                let foreignKeys = try await stores[0].query("PRAGMA foreign_keys")
                #expect(journal.first?.column("journal_mode")?.string == "wal")
                #expect(foreignKeys.first?.column("foreign_keys")?.integer == 1)
            }
        }
    }

    @Test("two connections to one file never lease the same job")
    func sharedFileLeases() async throws {
        try await withTemporaryDirectory { folder in
            try await withSQLiteStores(2, path: folder.appendingPathComponent("shared.sqlite").path) { stores in
                let (first, second) = (stores[0], stores[1])
                try await first.migrate()
                let now = Date(timeIntervalSince1970: 1_767_225_600)
                let app = App(
                    name: "Shared",
                    bundleID: "com.example.shared",
                    teamID: "TEAM123456",
                    environments: [.sandbox],
                    createdAt: now
                )
                try await first.createApp(app)
                for _ in 0..<30 {
                    try await first.enqueueJob(Job(appID: app.id, kind: .broadcast, dueAt: now, createdAt: now))
                }
                let leased = try await withThrowingTaskGroup(of: [JobID].self) { group in
                    for (index, store) in [first, second, first, second].enumerated() {
                        group.addTask {
                            var ids: [JobID] = []
                            while true {
                                let jobs = try await store.leaseJobs(
                                    owner: "worker-\(index)",
                                    kinds: nil,
                                    now: now,
                                    leaseDuration: .seconds(30),
                                    limit: 2
                                )
                                if jobs.isEmpty { return ids }
                                ids += jobs.map(\.id)
                            }
                        }
                    }
                    return try await group.reduce(into: []) { $0 += $1 }
                }
                #expect(leased.count == 30)
                #expect(Set(leased).count == 30)
            }
        }
    }
}

extension SQLiteStoreTests {
    @Test("two processes migrating one file at once apply each migration once")
    func sharedFileMigrations() async throws {
        try await withTemporaryDirectory { folder in
            try await withSQLiteStores(2, path: folder.appendingPathComponent("shared.sqlite").path) { stores in
                async let one = stores[0].migrateReporting()
                async let two = stores[1].migrateReporting()
                let reports = try await [one, two]
                // Either process may apply any one migration, but each is applied once.
                let versions = try MigrationDirectory.sources.migrations(for: .sqlite).map(\.version)
                #expect(reports.flatMap(\.applied).map(\.version).sorted() == versions)
            }
        }
    }

    @Test("a write whose task is cancelled in the middle of its transaction rolls back and leaves the store writable")
    func cancelledTransactionRollsBack() async throws {
        try await withTemporaryDirectory { folder in
            try await withSQLiteStores(1, path: folder.appendingPathComponent("cancelled.sqlite").path) { stores in
                let store = stores[0]
                _ = try await store.query("CREATE TABLE marks (name text NOT NULL)")
                let cut = Task {
                    try await store.write { connection in
                        _ = try await connection.query("INSERT INTO marks (name) VALUES ('first')")
                        // The task is cancelled between two statements of the transaction: the next
                        // statement is dropped, and so would be the ROLLBACK sent from this task.
                        withUnsafeCurrentTask { $0?.cancel() }
                        _ = try await connection.query("INSERT INTO marks (name) VALUES ('second')")
                    }
                }
                await #expect(throws: CancellationError.self) { try await cut.value }

                // Not left inside that transaction: a new one begins, and nothing of the cut one stayed.
                try await store.write { connection in
                    _ = try await connection.query("INSERT INTO marks (name) VALUES ('after')")
                }
                let names = try await store.query("SELECT name FROM marks ORDER BY name").compactMap {
                    $0.column("name")?.string
                }
                #expect(names == ["after"])
            }
        }
    }
}

/// Opens `count` stores on one file (as that many processes would), runs `body`, and closes every
/// store whatever happens: a connection left open would trip SQLiteNIO's check in `deinit`.
private func withSQLiteStores<Result>(
    _ count: Int,
    path: String,
    _ body: ([SQLiteStore]) async throws -> Result
) async throws -> Result {
    let configuration = StoreConfiguration(sealer: nil, migrations: .sources)
    var stores: [SQLiteStore] = []
    do {
        for _ in 0..<count { stores.append(try await SQLiteStore.open(path: path, configuration: configuration)) }
        let result = try await body(stores)
        for store in stores { try await store.close() }
        return result
    } catch {
        for store in stores { try? await store.close() }
        throw error
    }
}
