import MarqueeCore

extension InputValidation {
    /// Refuses U+0000 (NUL) anywhere in a JSON value a producer gives (a key or a string, however
    /// deep): Marquee keeps such values as JSON that PostgreSQL reads with `->>` (the funnel, late
    /// joiners, the event's GET), which fails for the whole row on an escaped NUL anywhere in it,
    /// and no Live Activity needs one. Checked on the decoded value, so a string holding the six
    /// characters `\u0000` is text like any other. One error per value, at the first NUL's pointer.
    mutating func rejectNUL(in value: JSONValue, _ pointer: String) {
        if let found = Self.firstNUL(in: value, at: pointer) {
            add(FieldError(found, "holds U+0000 (NUL), which Marquee does not store: remove it"))
        }
    }

    mutating func rejectNUL(in object: JSONObject, _ pointer: String) {
        rejectNUL(in: .object(object), pointer)
    }

    /// The JSON Pointer (RFC 6901) of the first key or string holding NUL, depth first.
    private static func firstNUL(in value: JSONValue, at pointer: String) -> String? {
        switch value {
        case .string(let string):
            return string.unicodeScalars.contains("\0") ? pointer : nil
        case .array(let elements):
            for (index, element) in elements.enumerated() {
                if let found = firstNUL(in: element, at: "\(pointer)/\(index)") { return found }
            }
            return nil
        case .object(let object):
            for (key, element) in object.pairs {
                let path = "\(pointer)/\(JSONPointer.referenceToken(key))"
                if key.unicodeScalars.contains("\0") { return path }
                if let found = firstNUL(in: element, at: path) { return found }
            }
            return nil
        case .null, .bool, .integer, .number:
            return nil
        }
    }
}
