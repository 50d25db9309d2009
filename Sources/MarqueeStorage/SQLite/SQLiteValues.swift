import Foundation
import MarqueeCore
import NIOCore
import SQLiteNIO

/// How domain values are bound on SQLite: UUIDs as lower-case text, times as integer microseconds
/// since 1970 (PostgreSQL's precision), booleans as 0/1, bytes as blobs.
extension SQLiteData {
    static func uuid(_ uuid: UUID) -> SQLiteData { .text(uuid.lowercasedText) }
    static func uuid(_ uuid: UUID?) -> SQLiteData { uuid.map { .uuid($0) } ?? .null }
    static func id<Entity>(_ id: Identifier<Entity>) -> SQLiteData { .uuid(id.uuid) }
    static func id<Entity>(_ id: Identifier<Entity>?) -> SQLiteData { .uuid(id?.uuid) }

    static func date(_ date: Date) -> SQLiteData { .integer(SQLiteInt64(SQLiteDates.microseconds(date))) }
    static func date(_ date: Date?) -> SQLiteData { date.map { .date($0) } ?? .null }

    static func text(_ text: String?) -> SQLiteData { text.map { .text($0) } ?? .null }
    static func int(_ value: Int64) -> SQLiteData { .integer(SQLiteInt64(value)) }
    static func int(_ value: Int64?) -> SQLiteData { value.map { .int($0) } ?? .null }
    static func int(_ value: Int) -> SQLiteData { .integer(SQLiteInt64(value)) }
    static func int(_ value: Int?) -> SQLiteData { value.map { .int($0) } ?? .null }
    static func bool(_ value: Bool) -> SQLiteData { .integer(value ? 1 : 0) }
    static func bytes(_ bytes: [UInt8]) -> SQLiteData { .blob(ByteBuffer(bytes: bytes)) }

    /// A list bound once, as the JSON array `json_each(?)` reads (`IN (SELECT value FROM
    /// json_each(?))`), each element as it is bound alone: row IDs as integers, IDs as lower-case text.
    static func jsonList(_ rowIDs: [Int64]) -> SQLiteData {
        .text(ColumnCoding.json(.array(rowIDs.map { .integer($0) })))
    }
    static func jsonList<Entity>(_ ids: [Identifier<Entity>]) -> SQLiteData {
        .text(ColumnCoding.json(.array(ids.map { .string($0.uuid.lowercasedText) })))
    }
    static func jsonList(_ strings: [String]) -> SQLiteData {
        .text(ColumnCoding.json(.array(strings.map { .string($0) })))
    }
}

enum SQLiteDates {
    static func microseconds(_ date: Date) -> Int64 {
        date.microsecondsSince1970
    }

    static func date(microseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(microseconds) / 1_000_000)
    }
}

/// `ColumnReader` over an SQLite row.
struct SQLiteColumns: ColumnReader {
    let row: SQLiteRow
    let entity: String

    init(_ row: SQLiteRow, entity: String = "row") {
        self.row = row
        self.entity = entity
    }

    private func data(_ column: String) throws -> SQLiteData {
        guard let data = row.column(column) else {
            throw StoreError.corruptRow(entity: entity, detail: "no column \(column)")
        }
        return data
    }

    private func mistyped(_ column: String) -> StoreError {
        .corruptRow(entity: entity, detail: "column \(column) has an unexpected type")
    }

    func optionalString(_ column: String) throws -> String? {
        switch try data(column) {
        case .null: nil
        case .text(let text): text
        default: throw mistyped(column)
        }
    }

    func optionalInt64(_ column: String) throws -> Int64? {
        switch try data(column) {
        case .null: nil
        case .integer(let value): Int64(value)
        default: throw mistyped(column)
        }
    }

    func optionalBool(_ column: String) throws -> Bool? {
        try optionalInt64(column).map { $0 != 0 }
    }

    func optionalDate(_ column: String) throws -> Date? {
        try optionalInt64(column).map(SQLiteDates.date(microseconds:))
    }

    func optionalUUID(_ column: String) throws -> UUID? {
        guard let text = try optionalString(column) else { return nil }
        guard let uuid = UUID(uuidString: text) else { throw mistyped(column) }
        return uuid
    }

    func optionalBytes(_ column: String) throws -> [UInt8]? {
        switch try data(column) {
        case .null: nil
        case .blob(let buffer): Array(buffer.readableBytesView)
        default: throw mistyped(column)
        }
    }
}

extension Array where Element == SQLiteRow {
    /// Maps every row through a `RowMapping` function.
    func mapped<Value>(_ transform: (SQLiteColumns) throws -> Value) throws -> [Value] {
        try map { try transform(SQLiteColumns($0, entity: "\(Value.self)")) }
    }
}

extension Optional where Wrapped == SQLiteRow {
    func mapped<Value>(_ transform: (SQLiteColumns) throws -> Value) throws -> Value? {
        try map { try transform(SQLiteColumns($0, entity: "\(Value.self)")) }
    }
}

extension SQLiteStore {
    /// `count` bind markers for an `IN (…)` list: `?, ?, ?`.
    static func placeholders(_ count: Int) -> String {
        Array(repeating: "?", count: count).joined(separator: ", ")
    }
}
