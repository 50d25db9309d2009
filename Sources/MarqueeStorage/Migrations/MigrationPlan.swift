/// What a database has and what it lacks, after checking that nothing applied was edited.
public struct MigrationPlan: Sendable, Hashable {
    public var applied: [AppliedMigration]
    public var pending: [Migration]

    /// Compares the files with the history; throws `MigrationError.checksumMismatch` for an edited
    /// applied migration and `.unknownAppliedMigration` for one the files lack.
    public init(available: [Migration], applied: [AppliedMigration]) throws {
        let byVersion = Dictionary(uniqueKeysWithValues: available.map { ($0.version, $0) })
        for record in applied {
            guard let file = byVersion[record.version] else {
                throw MigrationError.unknownAppliedMigration(version: record.version, name: record.name)
            }
            guard file.checksum == record.checksum else {
                throw MigrationError.checksumMismatch(
                    version: record.version,
                    name: record.name,
                    applied: record.checksum,
                    file: file.checksum
                )
            }
        }
        let appliedVersions = Set(applied.map(\.version))
        self.applied = applied.sorted { $0.version < $1.version }
        self.pending = available.filter { !appliedVersions.contains($0.version) }
    }
}

/// What a migration run did.
public struct MigrationReport: Sendable, Hashable {
    /// Applied before this run.
    public var alreadyApplied: [AppliedMigration]
    /// Applied by this run, in order.
    public var applied: [Migration]
}
