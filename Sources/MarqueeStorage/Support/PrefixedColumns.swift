import Foundation

/// Another table's columns in one result row, each named with a prefix (`channel_id` for a
/// channel's `id` beside an event's), read by the names `RowMapping` knows.
struct PrefixedColumns<Base: ColumnReader>: ColumnReader {
    let base: Base
    let prefix: String
    var entity: String { base.entity }

    func optionalString(_ column: String) throws -> String? { try base.optionalString(prefix + column) }
    func optionalInt64(_ column: String) throws -> Int64? { try base.optionalInt64(prefix + column) }
    func optionalBool(_ column: String) throws -> Bool? { try base.optionalBool(prefix + column) }
    func optionalDate(_ column: String) throws -> Date? { try base.optionalDate(prefix + column) }
    func optionalUUID(_ column: String) throws -> UUID? { try base.optionalUUID(prefix + column) }
    func optionalBytes(_ column: String) throws -> [UInt8]? { try base.optionalBytes(prefix + column) }
}
