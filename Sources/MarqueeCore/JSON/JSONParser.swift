/// A strict RFC 8259 parser from UTF-8 bytes into `JSONValue`, keeping object key order.
///
/// The emulator validates every push body on the event loop, and the API's contract check reads
/// every request body before its operation does, so the parser works on the body's bytes in place
/// (an unsafe buffer for the duration of a call: no bounds check or reference count per byte) and
/// builds values only when asked. It is several times cheaper than `JSONDecoder`
/// through `Codable` and keeps the exact shape a device would decode (integers stay integers, key
/// order stays).
public struct JSONParser {
    /// Why a body is not JSON (the emulator answers `BadRequestPayload` where APNs documents that).
    public struct SyntaxError: Error, Equatable {
        public let offset: Int

        public init(offset: Int) {
            self.offset = offset
        }
    }

    /// Nesting deeper than this is rejected rather than risking the stack on hostile input.
    public static let maximumDepth = 64

    private let bytes: UnsafeBufferPointer<UInt8>
    private var index: Int
    private let end: Int

    private init(bytes: UnsafeBufferPointer<UInt8>, range: Range<Int>) {
        self.bytes = bytes
        self.index = range.lowerBound
        self.end = range.upperBound
    }

    /// Parses a complete document; trailing non-whitespace is an error.
    public static func parse(_ bytes: [UInt8]) throws(SyntaxError) -> JSONValue {
        try parse(bytes, range: 0..<bytes.count)
    }

    /// Parses the document in `range` of `bytes`.
    public static func parse(_ bytes: [UInt8], range: Range<Int>) throws(SyntaxError) -> JSONValue {
        try bytes.withUnsafeBufferPointer { buffer throws(SyntaxError) in
            try document(in: buffer, range: range)
        }
    }

    /// Parses a complete document held in memory the caller owns for the call (a request body's
    /// readable bytes), without copying it.
    public static func parse(_ bytes: UnsafeRawBufferPointer) throws(SyntaxError) -> JSONValue {
        let buffer = bytes.assumingMemoryBound(to: UInt8.self)
        return try document(in: buffer, range: 0..<buffer.count)
    }

    private static func document(
        in buffer: UnsafeBufferPointer<UInt8>,
        range: Range<Int>
    ) throws(SyntaxError) -> JSONValue {
        var parser = JSONParser(bytes: buffer, range: range)
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        guard parser.index == range.upperBound else { throw SyntaxError(offset: parser.index) }
        return value
    }

    /// Checks a complete document that must be an object and returns the byte ranges of its members
    /// and of the members of `nestedKey`'s object, without building any value: push bodies are
    /// validated whole, but only the fields a device looks at are ever materialised.
    public static func indexObject(
        _ bytes: [UInt8],
        nestedKey: String
    ) throws(SyntaxError) -> (members: [(key: String, range: Range<Int>)], nested: [(key: String, range: Range<Int>)]?)
    {
        try bytes.withUnsafeBufferPointer { buffer throws(SyntaxError) in
            var parser = JSONParser(bytes: buffer, range: 0..<buffer.count)
            parser.skipWhitespace()
            guard parser.index < parser.end, buffer[parser.index] == UInt8(ascii: "{") else {
                try parser.skipValue(depth: 0)
                parser.skipWhitespace()
                guard parser.index == parser.end else { throw SyntaxError(offset: parser.index) }
                return ([], nil)
            }
            var nested: [(key: String, range: Range<Int>)]?
            let members = try parser.indexMembers(depth: 0) { key, range throws(SyntaxError) in
                guard key == nestedKey, buffer[range.lowerBound] == UInt8(ascii: "{") else { return }
                var inner = JSONParser(bytes: buffer, range: range)
                nested = try inner.indexMembers(depth: 1) { _, _ throws(SyntaxError) in }
            }
            parser.skipWhitespace()
            guard parser.index == parser.end else { throw SyntaxError(offset: parser.index) }
            return (members, nested)
        }
    }

    /// Walks the object at `index`, recording each member's value range.
    private mutating func indexMembers(
        depth: Int,
        visit: (String, Range<Int>) throws(SyntaxError) -> Void
    ) throws(SyntaxError) -> [(key: String, range: Range<Int>)] {
        index += 1
        var members: [(key: String, range: Range<Int>)] = []
        skipWhitespace()
        if index < end, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return members
        }
        while true {
            skipWhitespace()
            guard index < end, bytes[index] == UInt8(ascii: "\"") else { throw error }
            let key = try parseString()
            skipWhitespace()
            guard index < end, bytes[index] == UInt8(ascii: ":") else { throw error }
            index += 1
            skipWhitespace()
            let start = index
            try skipValue(depth: depth + 1)
            members.append((key, start..<index))
            try visit(key, start..<index)
            if try closes(with: UInt8(ascii: "}")) { return members }
        }
    }

    /// Checks one value and moves past it, building nothing.
    private mutating func skipValue(depth: Int) throws(SyntaxError) {
        guard depth < Self.maximumDepth, index < end else { throw error }
        switch bytes[index] {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            let closing = bytes[index] == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
            let isObject = closing == UInt8(ascii: "}")
            index += 1
            skipWhitespace()
            if index < end, bytes[index] == closing {
                index += 1
                return
            }
            while true {
                skipWhitespace()
                if isObject {
                    guard index < end, bytes[index] == UInt8(ascii: "\"") else { throw error }
                    try skipString()
                    skipWhitespace()
                    guard index < end, bytes[index] == UInt8(ascii: ":") else { throw error }
                    index += 1
                    skipWhitespace()
                }
                try skipValue(depth: depth + 1)
                if try closes(with: closing) { return }
            }
        case UInt8(ascii: "\""): try skipString()
        case UInt8(ascii: "t"): try expectLiteral("true")
        case UInt8(ascii: "f"): try expectLiteral("false")
        case UInt8(ascii: "n"): try expectLiteral("null")
        default: _ = try scanNumber()
        }
    }

    private mutating func skipString() throws(SyntaxError) {
        index += 1
        while index < end {
            index = Self.endOfPlainRun(in: bytes, from: index, to: end)
            guard index < end else { break }
            let byte = bytes[index]
            guard byte != UInt8(ascii: "\"") else {
                index += 1
                return
            }
            guard byte == UInt8(ascii: "\\") else { throw error }
            index += 1
            guard index < end else { throw error }
            switch bytes[index] {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                index += 1
            case UInt8(ascii: "u"):
                index += 1
                _ = try parseHex4()
            default:
                throw error
            }
        }
        throw error
    }

    /// The index of the first byte at or after `start` that ends a run of plain string content: a
    /// quote, a backslash or a control character (or `end`). Most of a string is plain, so it is
    /// scanned eight bytes at a time, with the usual "has a zero byte" bit trick
    /// (`(x - 0x01…) & ~x & 0x80…`) applied to the word XORed with `"`, with `\`, and to the
    /// word itself for bytes below 0x20.
    private static func endOfPlainRun(in bytes: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int) -> Int {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highBits: UInt64 = 0x8080_8080_8080_8080
        var index = start
        if let base = bytes.baseAddress {
            let raw = UnsafeRawPointer(base)
            while index + 8 <= end {
                let word = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: index, as: UInt64.self))
                let quotes = word ^ (ones &* UInt64(UInt8(ascii: "\"")))
                let backslashes = word ^ (ones &* UInt64(UInt8(ascii: "\\")))
                let special =
                    ((quotes &- ones) & ~quotes) | ((backslashes &- ones) & ~backslashes)
                    | ((word &- ones &* 0x20) & ~word)
                if special & highBits != 0 { break }
                index += 8
            }
        }
        while index < end {
            let byte = bytes[index]
            guard byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\"), byte >= 0x20 else { return index }
            index += 1
        }
        return index
    }

    private var error: SyntaxError { SyntaxError(offset: index) }

    /// After an element of an object or array: moves past `,` (false) or the closing bracket
    /// (true); anything else is an error.
    private mutating func closes(with closing: UInt8) throws(SyntaxError) -> Bool {
        skipWhitespace()
        guard index < end else { throw error }
        if bytes[index] == UInt8(ascii: ",") {
            index += 1
            return false
        }
        guard bytes[index] == closing else { throw error }
        index += 1
        return true
    }

    private mutating func skipWhitespace() {
        while index < end {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func parseValue(depth: Int) throws(SyntaxError) -> JSONValue {
        guard depth < Self.maximumDepth, index < end else { throw error }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth)
        case UInt8(ascii: "["): return try parseArray(depth: depth)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return .null
        default: return try parseNumber()
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(SyntaxError) {
        let count = literal.utf8CodeUnitCount
        guard index + count <= end else { throw error }
        let matches = literal.withUTF8Buffer { expected in
            for offset in 0..<count where bytes[index + offset] != expected[offset] { return false }
            return true
        }
        guard matches else { throw error }
        index += count
    }

    private mutating func parseObject(depth: Int) throws(SyntaxError) -> JSONValue {
        index += 1
        var object = JSONObject()
        skipWhitespace()
        if index < end, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(object)
        }
        while true {
            skipWhitespace()
            guard index < end, bytes[index] == UInt8(ascii: "\"") else { throw error }
            let key = try parseString()
            skipWhitespace()
            guard index < end, bytes[index] == UInt8(ascii: ":") else { throw error }
            index += 1
            skipWhitespace()
            object[key] = try parseValue(depth: depth + 1)
            if try closes(with: UInt8(ascii: "}")) { return .object(object) }
        }
    }

    private mutating func parseArray(depth: Int) throws(SyntaxError) -> JSONValue {
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < end, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue(depth: depth + 1))
            if try closes(with: UInt8(ascii: "]")) { return .array(elements) }
        }
    }

    private mutating func parseString() throws(SyntaxError) -> String {
        index += 1
        let start = index
        // Fast path: no escapes, so the bytes between the quotes are the string.
        index = Self.endOfPlainRun(in: bytes, from: index, to: end)
        guard index < end else { throw error }
        if bytes[index] == UInt8(ascii: "\"") {
            let string = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
            index += 1
            return string
        }
        guard bytes[index] == UInt8(ascii: "\\") else { throw error }
        var scalars = Array(UnsafeBufferPointer(rebasing: bytes[start..<index]))
        while index < end {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return String(decoding: scalars, as: UTF8.self)
            case UInt8(ascii: "\\"):
                index += 1
                guard index < end else { throw error }
                let escaped = bytes[index]
                index += 1
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scalars.append(escaped)
                case UInt8(ascii: "b"): scalars.append(0x08)
                case UInt8(ascii: "f"): scalars.append(0x0C)
                case UInt8(ascii: "n"): scalars.append(0x0A)
                case UInt8(ascii: "r"): scalars.append(0x0D)
                case UInt8(ascii: "t"): scalars.append(0x09)
                case UInt8(ascii: "u"):
                    var codePoint = try parseHex4()
                    if (0xD800..<0xDC00).contains(codePoint) {
                        guard index + 1 < end, bytes[index] == UInt8(ascii: "\\"),
                            bytes[index + 1] == UInt8(ascii: "u")
                        else { throw error }
                        index += 2
                        let low = try parseHex4()
                        guard (0xDC00..<0xE000).contains(low) else { throw error }
                        codePoint = 0x10000 + ((codePoint - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00..<0xE000).contains(codePoint) {
                        throw error
                    }
                    guard let scalar = Unicode.Scalar(codePoint) else { throw error }
                    scalars.append(contentsOf: String(Character(scalar)).utf8)
                default:
                    throw error
                }
            default:
                guard byte >= 0x20 else { throw error }
                scalars.append(byte)
                index += 1
            }
        }
        throw error
    }

    private mutating func parseHex4() throws(SyntaxError) -> UInt32 {
        guard index + 4 <= end else { throw error }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    private mutating func parseNumber() throws(SyntaxError) -> JSONValue {
        let start = index
        let isInteger = try scanNumber()
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        if isInteger, let integer = Int64(text) { return .integer(integer) }
        guard let number = Double(text) else { throw SyntaxError(offset: start) }
        return .number(number)
    }

    /// Moves past a number; whether it had neither fraction nor exponent.
    private mutating func scanNumber() throws(SyntaxError) -> Bool {
        var isInteger = true
        if index < end, bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < end else { throw error }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else if (UInt8(ascii: "1")...UInt8(ascii: "9")).contains(bytes[index]) {
            while index < end, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
        } else {
            throw error
        }
        if index < end, bytes[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            let digitsStart = index
            while index < end, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            guard index > digitsStart else { throw error }
        }
        if index < end, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if index < end, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            let digitsStart = index
            while index < end, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            guard index > digitsStart else { throw error }
        }
        return isInteger
    }
}
