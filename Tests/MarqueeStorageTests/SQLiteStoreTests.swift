import Foundation
import MarqueeCore
@testable import MarqueeStorage
import SQLiteNIO
import Testing

/// What only the embedded store has to show: its file mode, and several processes (here: several
/// connections) sharing one file.
@Suite("SQLite store")
struct SQLiteStoreTests {
    @Test("the database runs in WAL mode with foreign keys enforced")
    func pragmas() async throws {
        try await withTemporaryDirectory { folder in
            let store = try await SQLiteStore.open(
                path: folder.appendingPathComponent("nested/marquee.sqlite").path,
                configuration: StoreConfiguration(sealer: nil, migrations: .sources)
            )
            let journal = try await store.query("PRAGMA journal_mode")
            let foreignKeys = try await store.query("PRAGMA foreign_keys")
            try await store.close()
            #expect(journal.first?.column("journal_mode")?.string == "wal")
            #expect(foreignKeys.first?.column("foreign_keys")?.integer == 1)
        }
    }

    @Test("two connections to one file never lease the same job")
    func sharedFileLeases() async throws {
        try await withTemporaryDirectory { folder in
            let path = folder.appendingPathComponent("shared.sqlite").path
            let configuration = StoreConfiguration(sealer: nil, migrations: .sources)
            let first = try await SQLiteStore.open(path: path, configuration: configuration)
            try await first.migrate()
            let second = try await SQLiteStore.open(path: path, configuration: configuration)
            let now = Date(timeIntervalSince1970: 1_767_225_600)
            let app = App(name: "Shared", bundleID: "com.example.shared", teamID: "TEAM123456", environments: [.sandbox], createdAt: now)
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
            try await first.close()
            try await second.close()
            #expect(leased.count == 30)
            #expect(Set(leased).count == 30)
        }
    }
}

extension SQLiteStoreTests {
    @Test("two processes migrating one file at once apply each migration once")
    func sharedFileMigrations() async throws {
        try await withTemporaryDirectory { folder in
            let path = folder.appendingPathComponent("shared.sqlite").path
            let configuration = StoreConfiguration(sealer: nil, migrations: .sources)
            let first = try await SQLiteStore.open(path: path, configuration: configuration)
            let second = try await SQLiteStore.open(path: path, configuration: configuration)
            async let one = first.migrateReporting()
            async let two = second.migrateReporting()
            let reports = try await [one, two]
            try await first.close()
            try await second.close()
            #expect(reports.flatMap(\.applied).map(\.version) == [1])
        }
    }
}
