import Foundation

/// Where the SQL migrations live, per dialect: `<root>/postgres` and `<root>/sqlite`.
public struct MigrationDirectory: Sendable, Hashable {
    public enum Dialect: String, Sendable, Hashable, CaseIterable {
        case postgres
        case sqlite
    }

    /// The folder holding `postgres/` and `sqlite/`.
    public var root: URL

    public init(root: URL) {
        self.root = root
    }

    /// `MARQUEE_SQL_DIR` if set, else `./sql` if it exists, else the `sql/` folder of the sources
    /// this module was built from (tests and `swift run` from anywhere in the checkout).
    public static func resolved(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        currentDirectory: String = FileManager.default.currentDirectoryPath
    ) -> MigrationDirectory {
        if let configured = environment["MARQUEE_SQL_DIR"], !configured.isEmpty {
            return MigrationDirectory(root: URL(fileURLWithPath: configured, isDirectory: true))
        }
        let local = URL(fileURLWithPath: currentDirectory, isDirectory: true).appendingPathComponent("sql")
        if FileManager.default.fileExists(atPath: local.appendingPathComponent("postgres").path) {
            return MigrationDirectory(root: local)
        }
        return sources
    }

    /// `sql/` next to `Sources/` in the checkout this file was compiled from.
    public static var sources: MigrationDirectory {
        let root = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent()  // Migrations
            .deletingLastPathComponent()  // MarqueeStorage
            .deletingLastPathComponent()  // Sources
            .deletingLastPathComponent()  // package root
        return MigrationDirectory(root: root.appendingPathComponent("sql", isDirectory: true))
    }

    /// The dialect's migrations in version order.
    public func migrations(for dialect: Dialect) throws -> [Migration] {
        let folder = root.appendingPathComponent(dialect.rawValue, isDirectory: true)
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        } catch {
            throw MigrationError.directoryUnreadable(path: folder.path)
        }
        var migrations: [Migration] = []
        for fileName in names.sorted() where fileName.hasSuffix(".sql") {
            let stem = fileName.dropLast(4)
            guard let underscore = stem.firstIndex(of: "_"),
                let version = Int(stem[..<underscore]),
                version > 0,
                stem.index(after: underscore) < stem.endIndex
            else {
                throw MigrationError.badFileName(fileName)
            }
            let url = folder.appendingPathComponent(fileName)
            guard let data = FileManager.default.contents(atPath: url.path),
                let sql = String(data: data, encoding: .utf8)
            else {
                throw MigrationError.directoryUnreadable(path: url.path)
            }
            migrations.append(
                Migration(version: version, name: String(stem[stem.index(after: underscore)...]), sql: sql)
            )
        }
        migrations.sort { $0.version < $1.version }
        for (previous, next) in zip(migrations, migrations.dropFirst()) where previous.version == next.version {
            throw MigrationError.duplicateVersion(next.version)
        }
        return migrations
    }
}
