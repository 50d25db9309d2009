import MarqueeCore
import Testing

@testable import MarqueeStorage

/// Stored JSON as both backends give it back: PostgreSQL's `jsonb` reorders an object's keys and
/// SQLite keeps the written text, so a value is read with every object's keys sorted, its numbers
/// as written (integers stay integers) and anything else refused as a corrupt row.
@Suite("Stored JSON read back")
struct ColumnCodingTests {
    @Test("keys sorted at every depth, integers, numbers, strings and literals as written")
    func sortedKeys() throws {
        let value = try ColumnCoding.jsonValue(
            #"{"z": [{"b": 1, "a": 2.5}], "a": {"y": null, "x": true}, "m": "\u00e9\"", "n": -0, "big": 18446744073709551616}"#,
            entity: "job"
        )
        guard case .object(let object) = value else {
            Issue.record("not an object: \(value)")
            return
        }
        #expect(object.keys == ["a", "big", "m", "n", "z"])
        #expect(value["a"] == .object(["x": .bool(true), "y": .null]))
        #expect(value["z"] == .array([.object(["a": .number(2.5), "b": .integer(1)])]))
        #expect(value["m"] == .string("é\""))
        #expect(value["n"] == .integer(0))
        #expect(value["big"] == .number(18_446_744_073_709_551_616))
        if case .object(let nested)? = value["z"].flatMap({
            if case .array(let items) = $0 { items.first } else { nil }
        }) {
            #expect(nested.keys == ["a", "b"])
        }
    }

    @Test("text that is not JSON is a corrupt row of its entity", arguments: ["", "{", #"{"a": 1} x"#, "[1,]"])
    func invalid(text: String) {
        #expect(throws: StoreError.corruptRow(entity: "job", detail: "invalid JSON")) {
            try ColumnCoding.jsonValue(text, entity: "job")
        }
    }
}
