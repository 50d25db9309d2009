import Foundation
import MarqueeCore

/// Typed reads of one result row, by column name. Both backends implement it, so that every table
/// is mapped to its domain value once (`RowMapping`) whatever database it came from. A missing or
/// mistyped value throws.
protocol ColumnReader {
    /// Names the table in `StoreError.corruptRow`.
    var entity: String { get }
    func optionalString(_ column: String) throws -> String?
    func optionalInt64(_ column: String) throws -> Int64?
    func optionalBool(_ column: String) throws -> Bool?
    func optionalDate(_ column: String) throws -> Date?
    func optionalUUID(_ column: String) throws -> UUID?
    func optionalBytes(_ column: String) throws -> [UInt8]?
}

extension ColumnReader {
    func required<Value>(_ value: Value?, _ column: String) throws -> Value {
        guard let value else { throw StoreError.corruptRow(entity: entity, detail: "column \(column) is NULL") }
        return value
    }

    func string(_ column: String) throws -> String { try required(optionalString(column), column) }
    func int64(_ column: String) throws -> Int64 { try required(optionalInt64(column), column) }
    func int(_ column: String) throws -> Int { Int(try int64(column)) }
    func optionalInt(_ column: String) throws -> Int? { try optionalInt64(column).map { Int($0) } }
    func bool(_ column: String) throws -> Bool { try required(optionalBool(column), column) }
    func date(_ column: String) throws -> Date { try required(optionalDate(column), column) }
    func uuid(_ column: String) throws -> UUID { try required(optionalUUID(column), column) }
    func bytes(_ column: String) throws -> [UInt8] { try required(optionalBytes(column), column) }

    func id<Entity>(_ column: String) throws -> Identifier<Entity> { Identifier(try uuid(column)) }
    func optionalID<Entity>(_ column: String) throws -> Identifier<Entity>? {
        try optionalUUID(column).map { Identifier($0) }
    }

    func parse<Value: RawRepresentable>(_ column: String, as type: Value.Type) throws -> Value
    where Value.RawValue == String {
        try ColumnCoding.parse(type, try string(column), entity: entity)
    }

    func parse<Value: RawRepresentable>(_ column: String, as type: Value.Type) throws -> Value
    where Value.RawValue == Int {
        try ColumnCoding.parse(type, try int(column), entity: entity)
    }

    func environments(_ column: String) throws -> Set<APNSEnvironment> {
        try ColumnCoding.environments(try string(column), entity: entity)
    }

    func reason(_ column: String) throws -> APNSErrorReason? {
        try optionalString(column).map(APNSErrorReason.init(reasonString:))
    }
}
