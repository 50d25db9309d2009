/// Any JSON value, kept exactly as the caller wrote it. `content-state` and `attributes` must reach
/// the device unchanged (ActivityKit decodes them with default `JSONDecoder` strategies), so Marquee
/// never maps their keys or re-types their numbers.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    /// Integers stay integers on the wire (`3`, not `3.0`).
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    /// Keys keep the order they were given in, so an encoded payload is stable byte for byte.
    case object(JSONObject)

    /// The value under `key` when this is an object.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let object) = self else { return nil }
        return object[key]
    }
}

/// A JSON object whose keys keep their order.
public struct JSONObject: Sendable, Hashable {
    public private(set) var keys: [String]
    private var values: [String: JSONValue]

    public init() {
        keys = []
        values = [:]
    }

    public init(_ pairs: [(String, JSONValue)]) {
        self.init()
        for (key, value) in pairs { self[key] = value }
    }

    public var isEmpty: Bool { keys.isEmpty }
    public var count: Int { keys.count }

    public subscript(key: String) -> JSONValue? {
        get { values[key] }
        set {
            if let newValue {
                if values.updateValue(newValue, forKey: key) == nil { keys.append(key) }
            } else if values.removeValue(forKey: key) != nil {
                keys.removeAll { $0 == key }
            }
        }
    }

    /// The pairs in key order.
    public var pairs: [(key: String, value: JSONValue)] {
        keys.map { ($0, values[$0] ?? .null) }
    }
}

extension JSONObject: ExpressibleByDictionaryLiteral {
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(elements)
    }
}

extension JSONValue: ExpressibleByDictionaryLiteral, ExpressibleByArrayLiteral, ExpressibleByStringLiteral,
    ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral, ExpressibleByBooleanLiteral, ExpressibleByNilLiteral
{
    public init(dictionaryLiteral elements: (String, JSONValue)...) { self = .object(JSONObject(elements)) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(nilLiteral: ()) { self = .null }
}
