/// Why migrations were refused. Every case names the file so that an operator knows what to fix.
public enum MigrationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The folder does not exist or cannot be read.
    case directoryUnreadable(path: String)
    /// A file in the folder is not named `NNNN_name.sql`.
    case badFileName(String)
    /// Two files carry the same version.
    case duplicateVersion(Int)
    /// A migration that was applied has been edited since.
    case checksumMismatch(version: Int, name: String, applied: String, file: String)
    /// The database has a migration this build does not know: it was migrated by a newer build.
    case unknownAppliedMigration(version: Int, name: String)
    /// A statement of a migration failed; the migration was rolled back.
    case statementFailed(version: Int, name: String, statement: Int, underlying: String)

    public var description: String {
        switch self {
        case .directoryUnreadable(let path):
            "cannot read the migrations folder \(path) (set --sql-dir or MARQUEE_SQL_DIR)"
        case .badFileName(let name):
            "\(name) is not a migration file name (expected NNNN_name.sql)"
        case .duplicateVersion(let version):
            "two migration files carry version \(version)"
        case .checksumMismatch(let version, let name, let applied, let file):
            """
            migration \(version) (\(name)) was edited after it was applied: checksum \(file.prefix(12))… differs \
            from the applied \(applied.prefix(12))…; migrations are forward-only, add a new one instead
            """
        case .unknownAppliedMigration(let version, let name):
            """
            the database has migration \(version) (\(name)) that this build does not have; it was migrated by a \
            newer Marquee
            """
        case .statementFailed(let version, let name, let statement, let underlying):
            "migration \(version) (\(name)) failed at statement \(statement) and was rolled back: \(underlying)"
        }
    }
}
