import Foundation
import MarqueeCore
import PostgresNIO

/// `ColumnReader` over a PostgreSQL row.
struct PostgresColumns: ColumnReader {
    let row: PostgresRandomAccessRow
    let entity: String

    init(_ row: PostgresRow, entity: String = "row") {
        self.row = row.makeRandomAccess()
        self.entity = entity
    }

    private func decode<Value: PostgresDecodable>(_ column: String, as type: Value?.Type) throws -> Value?
    where Value._DecodableType == Value {
        do {
            return try row[column].decode(Value?.self)
        } catch {
            throw StoreError.corruptRow(entity: entity, detail: "column \(column) is not a \(Value.self)")
        }
    }

    func optionalString(_ column: String) throws -> String? { try decode(column, as: String?.self) }
    func optionalInt64(_ column: String) throws -> Int64? { try decode(column, as: Int?.self).map { Int64($0) } }
    func optionalBool(_ column: String) throws -> Bool? { try decode(column, as: Bool?.self) }
    func optionalDate(_ column: String) throws -> Date? { try decode(column, as: Date?.self) }
    func optionalUUID(_ column: String) throws -> UUID? { try decode(column, as: UUID?.self) }
    func optionalBytes(_ column: String) throws -> [UInt8]? { try decode(column, as: Data?.self).map { Array($0) } }
}

extension Array where Element == PostgresRow {
    /// Maps every row through a `RowMapping` function.
    func mapped<Value>(_ transform: (PostgresColumns) throws -> Value) throws -> [Value] {
        // The type's name once per call, not once per row: it is only read in an error.
        let entity = "\(Value.self)"
        return try map { try transform(PostgresColumns($0, entity: entity)) }
    }
}

extension Optional where Wrapped == PostgresRow {
    func mapped<Value>(_ transform: (PostgresColumns) throws -> Value) throws -> Value? {
        try map { try transform(PostgresColumns($0, entity: "\(Value.self)")) }
    }
}
