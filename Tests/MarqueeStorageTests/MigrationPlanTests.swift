import Foundation
import MarqueeStorage
import Testing

@Suite("Migration files and plans")
struct MigrationPlanTests {
    @Test("the repository's migrations load in order for both dialects")
    func repositoryMigrations() throws {
        for dialect in MigrationDirectory.Dialect.allCases {
            let migrations = try MigrationDirectory.sources.migrations(for: dialect)
            #expect(migrations.first?.version == 1)
            #expect(migrations.first?.name == "initial")
            #expect(migrations.first?.checksum.count == 64)
        }
    }

    @Test("an edited applied migration and an unknown applied one are refused; the rest is pending")
    func plans() throws {
        let one = Migration(version: 1, name: "initial", sql: "CREATE TABLE a (id int);")
        let two = Migration(version: 2, name: "more", sql: "CREATE TABLE b (id int);")
        let appliedOne = AppliedMigration(version: 1, name: "initial", checksum: one.checksum, appliedAt: Date())
        #expect(try MigrationPlan(available: [one, two], applied: [appliedOne]).pending == [two])

        let edited = Migration(version: 1, name: "initial", sql: "CREATE TABLE a (id bigint);")
        #expect(
            throws: MigrationError.checksumMismatch(
                version: 1,
                name: "initial",
                applied: one.checksum,
                file: edited.checksum
            )
        ) {
            try MigrationPlan(available: [edited], applied: [appliedOne])
        }
        #expect(throws: MigrationError.unknownAppliedMigration(version: 1, name: "initial")) {
            try MigrationPlan(available: [two], applied: [appliedOne])
        }
    }

    @Test("badly named files and duplicate versions are refused")
    func fileNames() throws {
        try withTemporaryFolder { root in
            let folder = root.appendingPathComponent("sqlite")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try "".write(to: folder.appendingPathComponent("initial.sql"), atomically: true, encoding: .utf8)
            #expect(throws: MigrationError.badFileName("initial.sql")) {
                try MigrationDirectory(root: root).migrations(for: .sqlite)
            }
            try FileManager.default.removeItem(at: folder.appendingPathComponent("initial.sql"))
            try "".write(to: folder.appendingPathComponent("0001_a.sql"), atomically: true, encoding: .utf8)
            try "".write(to: folder.appendingPathComponent("001_b.sql"), atomically: true, encoding: .utf8)
            #expect(throws: MigrationError.duplicateVersion(1)) {
                try MigrationDirectory(root: root).migrations(for: .sqlite)
            }
        }
    }

    func withTemporaryFolder(_ body: (URL) throws -> Void) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("marquee-plan-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try body(folder)
    }
}
