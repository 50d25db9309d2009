import Foundation
import MarqueeCore
import MarqueeEngine
import MarqueeTesting
import PostgresNIO
import SQLiteNIO
import Testing

@testable import MarqueeStorage

@Suite("Migration 0002 (service)")
struct ServiceMigrationTests {
    /// A key row as 0001 allowed it, written with SQL because today's store writes only today's roles.
    struct LegacyKey {
        var id = APIKeyID()
        var role: String
        var prefix: String
        var createdAt: Date
    }

    @Test(
        "a database at 0001 with producer and device keys is migrated with the keys renamed",
        arguments: Backend.allCases
    )
    func upgradeRenamesRoles(backend: Backend) async throws {
        try await withMigrationsCopy { sqlRoot in
            // The database a previous release migrated: only 0001 is in the folder at first.
            let folder = sqlRoot.appendingPathComponent(backend.dialect.rawValue)
            let held = sqlRoot.appendingPathComponent("held")
            try FileManager.default.createDirectory(at: held, withIntermediateDirectories: true)
            let later = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter {
                !$0.hasPrefix("0001_")
            }
            #expect(later.contains("0002_service.sql"))
            for name in later {
                try FileManager.default.moveItem(
                    at: folder.appendingPathComponent(name),
                    to: held.appendingPathComponent(name)
                )
            }
            let released = {
                for name in later {
                    try FileManager.default.moveItem(
                        at: held.appendingPathComponent(name),
                        to: folder.appendingPathComponent(name)
                    )
                }
            }

            try await withScratchMarqueeStore(backend, sqlRoot: sqlRoot) { store, insert in
                #expect(try await store.migrateReporting().applied.map(\.version) == [1])
                let start = Date(timeIntervalSince1970: 1_767_225_600)
                let app = App(
                    name: "Legacy",
                    bundleID: "com.example.legacy",
                    teamID: "TEAM123456",
                    environments: [.sandbox],
                    createdAt: start
                )
                try await store.createApp(app)
                let legacy = ["admin", "producer", "device"].enumerated().map { index, role in
                    LegacyKey(role: role, prefix: "legacy\(index)", createdAt: start.addingTimeInterval(Double(index)))
                }
                for key in legacy { try await insert(app.id, key) }

                try released()
                let report = try await store.migrateReporting()
                // 0002 first; later migrations (0003, 0004, …) follow it.
                #expect(report.applied.first?.name == "service")
                #expect(report.applied.map(\.version) == report.applied.map(\.version).sorted())

                let keys = try await store.apiKeys(appID: app.id)
                #expect(keys.map(\.id) == legacy.map(\.id))
                #expect(keys.map(\.role) == [.admin, .publisher, .app])
                #expect(keys.allSatisfy { $0.appID == app.id })

                // The migrated table takes deployment keys, and only admin ones.
                let deployment = APIKeyCredential.generate().record(
                    appID: nil,
                    role: .admin,
                    label: "first start",
                    at: start
                )
                try await store.createAPIKey(deployment)
                #expect(try await store.apiKeys(appID: nil) == [deployment])
                let publisher = APIKeyCredential.generate().record(
                    appID: nil,
                    role: .publisher,
                    label: "refused",
                    at: start
                )
                await #expect(throws: (any Error).self) { try await store.createAPIKey(publisher) }
            }
        }
    }
}

/// A full store over an empty, unmigrated database reading its migrations from `sqlRoot`, with a
/// way to write a key row of 0001's shape.
private func withScratchMarqueeStore(
    _ backend: Backend,
    sqlRoot: URL,
    _ body: (any MarqueeStore & MigratingStore, _ insert: (AppID, ServiceMigrationTests.LegacyKey) async throws -> Void)
        async throws -> Void
) async throws {
    let configuration = StoreConfiguration(
        sealer: nil,
        migrations: MigrationDirectory(root: sqlRoot),
        clock: ManualWallClock()
    )
    switch backend {
    case .sqlite:
        try await withTemporaryDirectory { folder in
            let store = try await SQLiteStore.open(
                path: folder.appendingPathComponent("upgrade.sqlite").path,
                configuration: configuration
            )
            do {
                try await body(store) { appID, key in
                    _ = try await store.query(
                        """
                        INSERT INTO api_keys (id, app_id, role, prefix, secret_hash, label, created_at)
                        VALUES (?, ?, ?, ?, ?, ?, ?)
                        """,
                        [
                            .id(key.id), .id(appID), .text(key.role), .text(key.prefix), .bytes([1, 2, 3]),
                            .text(key.role), .date(key.createdAt),
                        ]
                    )
                }
                try await store.close()
            } catch {
                try? await store.close()
                throw error
            }
        }
    case .postgres:
        try await PostgresTestCluster.withDatabase(migrated: false) { postgres in
            try await withRunningClient(postgres) { client in
                try await body(PostgresStore(client: client, configuration: configuration)) { appID, key in
                    try await client.query(
                        """
                        INSERT INTO api_keys (id, app_id, role, prefix, secret_hash, label, created_at)
                        VALUES (\(key.id.uuid), \(appID.uuid), \(key.role), \(key.prefix), \(Data([1, 2, 3])), \
                        \(key.role), \(key.createdAt))
                        """
                    )
                }
            }
        }
    }
}
