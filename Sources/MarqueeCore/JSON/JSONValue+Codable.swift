extension JSONValue: Codable {
    public init(from decoder: any Decoder) throws {
        if var array = try? decoder.unkeyedContainer() {
            var elements: [JSONValue] = []
            while !array.isAtEnd { elements.append(try array.decode(JSONValue.self)) }
            self = .array(elements)
            return
        }
        if let keyed = try? decoder.container(keyedBy: DynamicKey.self) {
            var object = JSONObject()
            // Foundation's decoder does not promise source order for keys; sort so that a decoded
            // value always encodes the same way.
            for key in keyed.allKeys.sorted(by: { $0.stringValue < $1.stringValue }) {
                object[key.stringValue] = try keyed.decode(JSONValue.self, forKey: key)
            }
            self = .object(object)
            return
        }
        let single = try decoder.singleValueContainer()
        if single.decodeNil() {
            self = .null
        } else if let bool = try? single.decode(Bool.self) {
            self = .bool(bool)
        } else if let integer = try? single.decode(Int64.self) {
            self = .integer(integer)
        } else if let number = try? single.decode(Double.self) {
            self = .number(number)
        } else {
            self = .string(try single.decode(String.self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .null:
            var single = encoder.singleValueContainer()
            try single.encodeNil()
        case .bool(let bool):
            var single = encoder.singleValueContainer()
            try single.encode(bool)
        case .integer(let integer):
            var single = encoder.singleValueContainer()
            try single.encode(integer)
        case .number(let number):
            var single = encoder.singleValueContainer()
            try single.encode(number)
        case .string(let string):
            var single = encoder.singleValueContainer()
            try single.encode(string)
        case .array(let elements):
            var array = encoder.unkeyedContainer()
            for element in elements { try array.encode(element) }
        case .object(let object):
            var keyed = encoder.container(keyedBy: DynamicKey.self)
            for (key, value) in object.pairs { try keyed.encode(value, forKey: DynamicKey(key)) }
        }
    }
}

extension JSONObject: Codable {
    public init(from decoder: any Decoder) throws {
        guard case .object(let object) = try JSONValue(from: decoder) else {
            throw DecodingError.typeMismatch(
                JSONObject.self,
                .init(codingPath: decoder.codingPath, debugDescription: "Expected a JSON object")
            )
        }
        self = object
    }

    public func encode(to encoder: any Encoder) throws {
        try JSONValue.object(self).encode(to: encoder)
    }
}

struct DynamicKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}
