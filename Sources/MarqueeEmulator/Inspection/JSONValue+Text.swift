import MarqueeCore

extension JSONValue {
    /// A scalar as a Lock Screen prints it; nil for objects, arrays and null.
    public var text: String? {
        switch self {
        case .string(let value): value
        case .integer(let value): String(value)
        case .number(let value): String(value)
        case .bool(let value): String(value)
        case .null, .array, .object: nil
        }
    }
}
