extension JSONValue {
    /// The value as compact JSON bytes, keys in their given order. Foundation's `JSONEncoder` does not
    /// promise key order, and payload bytes must be stable: they are measured against APNs' size limits,
    /// encoded once per template and compared in tests.
    public var jsonBytes: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(128)
        write(into: &bytes)
        return bytes
    }

    /// The value as a compact JSON string.
    public var jsonString: String { String(decoding: jsonBytes, as: UTF8.self) }

    /// Appends the compact JSON form of this value.
    public func write(into bytes: inout [UInt8]) {
        switch self {
        case .null:
            bytes.append(contentsOf: "null".utf8)
        case .bool(let bool):
            bytes.append(contentsOf: (bool ? "true" : "false").utf8)
        case .integer(let integer):
            bytes.append(contentsOf: String(integer).utf8)
        case .number(let number):
            // JSON has no NaN or infinity; `JSONValue` decoded from JSON never holds them.
            if number.isFinite {
                bytes.append(contentsOf: number.description.utf8)
            } else {
                bytes.append(contentsOf: "null".utf8)
            }
        case .string(let string):
            JSONValue.writeString(string, into: &bytes)
        case .array(let elements):
            bytes.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                element.write(into: &bytes)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let object):
            object.write(into: &bytes)
        }
    }

    /// Appends `string` as a JSON string literal, escaping what JSON requires.
    public static func writeString(_ string: String, into bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0x00..<0x20:
                let hex: [UInt8] = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                bytes.append(hex[Int(byte >> 4)])
                bytes.append(hex[Int(byte & 0x0F)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}

extension JSONObject {
    /// Appends the compact JSON form of this object, keys in order.
    public func write(into bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "{"))
        for (index, pair) in pairs.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            JSONValue.writeString(pair.key, into: &bytes)
            bytes.append(UInt8(ascii: ":"))
            pair.value.write(into: &bytes)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// The object as compact JSON bytes.
    public var jsonBytes: [UInt8] {
        var bytes: [UInt8] = []
        write(into: &bytes)
        return bytes
    }
}
