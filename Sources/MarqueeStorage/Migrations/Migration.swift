import Crypto
import Foundation

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
        self.checksum = SHA256.hash(data: Data(sql.utf8)).hexString
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

extension Sequence where Element == UInt8 {
    /// Lower-case hex.
    var hexString: String {
        var string = ""
        for byte in self {
            string += byte < 16 ? "0" + String(byte, radix: 16) : String(byte, radix: 16)
        }
        return string
    }
}

extension Digest {
    var hexString: String { Array(self).hexString }
}
