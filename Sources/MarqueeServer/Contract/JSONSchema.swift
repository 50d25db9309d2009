import Foundation
import MarqueeCore

/// The part of a JSON Schema (OpenAPI 3.1) that the server checks before an operation decodes its
/// input: types, `null`, enums, `format: date-time`, patterns and bounds. `$ref`s are resolved
/// when the document is read, so a schema is a tree.
struct JSONSchema: Sendable {
    /// JSON Schema's `type`; empty for any value (free-form objects such as `contentState`).
    var types: Set<String> = []
    /// `enum`, each value as its JSON text would read unquoted (`sandbox`, `10`).
    var enumValues: [String]?
    var format: String?
    var pattern: SchemaPattern?
    var minimum: Double?
    var maximum: Double?
    var minLength: Int?
    var maxLength: Int?
    var minItems: Int?
    var maxItems: Int?
    /// Declared properties; nil when the object's members are free-form.
    var properties: [String: JSONSchema]?
    var items: [JSONSchema] = []
    /// `oneOf`/`anyOf` alternatives.
    var alternatives: [JSONSchema] = []

    var allowsNull: Bool { types.contains("null") || (types.isEmpty && alternatives.isEmpty) }

    /// What a value must be, in words: `an integer from 1 to 1000`, `one of sandbox, production`.
    var expectation: String {
        if let enumValues { return "one of " + enumValues.joined(separator: ", ") }
        let nonNull = types.subtracting(["null"])
        if nonNull.contains("integer") {
            switch (minimum, maximum) {
            case let (low?, high?): return "an integer from \(Int(low)) to \(Int(high))"
            case let (low?, nil): return "an integer of at least \(Int(low))"
            case let (nil, high?): return "an integer of at most \(Int(high))"
            default: return "an integer"
            }
        }
        if nonNull.contains("number") { return "a number" }
        if nonNull.contains("boolean") { return "true or false" }
        if nonNull.contains("array") { return "an array" }
        if nonNull.contains("object") { return "an object" }
        if format == "date-time" { return "an RFC 3339 date-time with a zone, such as 2026-11-28T15:00:00Z" }
        return "a string"
    }
}

extension JSONSchema {
    /// Why `text`, a path, query or header value, does not fit this schema; nil when it does.
    func problem(withParameter text: String) -> String? {
        if let enumValues {
            return enumValues.contains(text) ? nil : "must be \(expectation) (got \(Self.quoted(text)))"
        }
        if types.contains("integer") {
            guard let value = Int64(text), !text.hasPrefix("+") else {
                return "must be \(expectation) (got \(Self.quoted(text)))"
            }
            if let minimum, Double(value) < minimum { return "must be \(expectation) (got \(value))" }
            if let maximum, Double(value) > maximum { return "must be \(expectation) (got \(value))" }
            return nil
        }
        if types.contains("boolean") {
            return text == "true" || text == "false" ? nil : "must be true or false (got \(Self.quoted(text)))"
        }
        return problem(withString: text)
    }

    /// Why the string `text` does not fit this string schema's length, pattern or format.
    func problem(withString text: String) -> String? {
        let length = text.unicodeScalars.count
        if let minLength, length < minLength {
            return minLength == 1 ? "must not be empty" : "must be at least \(minLength) characters"
        }
        if let maxLength, length > maxLength { return "must be at most \(maxLength) characters (got \(length))" }
        if let pattern, !pattern.matches(text) { return "must match \(pattern.source)" }
        if format == "date-time", RFC3339.parse(text) == nil { return "must be \(expectation)" }
        return nil
    }

    /// The JSON Pointers and problems of `value` that this schema refuses before decoding: `null`
    /// where the schema does not allow it, a value of another type, an enum's stranger, a
    /// date-time that is not RFC 3339. Bounds and patterns of body fields are the engine's to
    /// check, with details of their own.
    func problems(with value: JSONValue, at pointer: String, into found: inout [(pointer: String, detail: String)]) {
        guard found.count < 20 else { return }
        if !alternatives.isEmpty {
            for alternative in alternatives {
                var attempt: [(pointer: String, detail: String)] = []
                alternative.problems(with: value, at: pointer, into: &attempt)
                if attempt.isEmpty { return }
            }
            found.append((pointer, "does not match any of the forms this field takes"))
            return
        }
        if case .null = value {
            if !allowsNull { found.append((pointer, "must be \(expectation), not null; leave the field out instead")) }
            return
        }
        guard !types.isEmpty else { return }
        // Built only for a value that does not fit: a batch of 1,000 tokens has some 7,000 values,
        // and each of them fits.
        var mismatch: (pointer: String, detail: String) { (pointer, "must be \(expectation)") }
        switch value {
        case .null:
            break
        case .object(let object):
            guard types.contains("object") else { return found.append(mismatch) }
            guard let properties else { return }
            for (key, member) in object.pairs {
                guard let property = properties[key] else { continue }
                property.problems(with: member, at: pointer + "/" + JSONPointer.referenceToken(key), into: &found)
            }
        case .array(let array):
            guard types.contains("array") else { return found.append(mismatch) }
            guard let item = items.first else { return }
            for (index, element) in array.enumerated() {
                item.problems(with: element, at: "\(pointer)/\(index)", into: &found)
            }
        case .string(let string):
            guard types.contains("string") else { return found.append(mismatch) }
            if string.unicodeScalars.contains("\u{0}") {
                // PostgreSQL's text takes no NUL; the document's patterns exclude it too.
                found.append((pointer, "must not contain the NUL character (U+0000)"))
            } else if let enumValues, !enumValues.contains(string) {
                found.append((pointer, "must be \(expectation) (got \(Self.quoted(string)))"))
            } else if format == "date-time", RFC3339.parse(string) == nil {
                found.append(mismatch)
            }
        case .bool:
            if !types.contains("boolean") { found.append(mismatch) }
        case .integer(let integer):
            guard types.contains("integer") || types.contains("number") else { return found.append(mismatch) }
            if let enumValues, !enumValues.contains(String(integer)) {
                found.append((pointer, "must be \(expectation) (got \(integer))"))
            }
        case .number(let number):
            guard
                types.contains("number")
                    || (types.contains("integer") && number.rounded() == number && abs(number) < 9e15)
            else {
                return found.append(mismatch)
            }
        }
    }

    /// A value a client sent, quoted for a detail: printable and short.
    static func quoted(_ text: String) -> String {
        let printable = String(
            String.UnicodeScalarView(
                text.unicodeScalars.prefix(40).map {
                    $0.properties.isWhitespace || $0.value < 0x20 || $0.value == 0x7F ? "?" : $0
                }
            )
        )
        return "\"" + printable + (text.unicodeScalars.count > 40 ? "…" : "") + "\""
    }
}
