import Crypto
import Foundation
import MarqueeCore

/// One forward-only migration file, `NNNN_name.sql`, of one dialect's folder under `sql/`.
public struct Migration: Sendable, Hashable {
    public var version: Int
    public var name: String
    public var sql: String
    /// Lower-case hex SHA-256 of the file's bytes; an applied migration whose file changed is refused.
    public var checksum: String

    public init(version: Int, name: String, sql: String) {
        self.version = version
        self.name = name
        self.sql = sql
        self.checksum = Hex.encode(SHA256.hash(data: Data(sql.utf8)))
    }
}

/// A migration recorded in `schema_migrations`.
public struct AppliedMigration: Sendable, Hashable {
    public var version: Int
    public var name: String
    public var checksum: String
    public var appliedAt: Date

    public init(version: Int, name: String, checksum: String, appliedAt: Date) {
        self.version = version
        self.name = name
        self.checksum = checksum
        self.appliedAt = appliedAt
    }
}
