import MarqueeCore
import Testing

@Suite("The JSON parser keeps payloads exactly as sent")
struct JSONParserTests {
    @Test("Key order, integers, doubles, escapes and nesting survive")
    func roundTrip() throws {
        let text = #"{"b":1,"a":[true,false,null,-2.5e3,"x\"\u00e9\ud83d\ude00"],"c":{"d":0.25}}"#
        let value = try JSONParser.parse(Array(text.utf8))
        guard case .object(let object) = value else {
            Issue.record("not an object")
            return
        }
        #expect(object.keys == ["b", "a", "c"])
        #expect(object["b"] == .integer(1))
        #expect(object["a"] == [true, false, nil, .number(-2500), .string("x\"é😀")])
        #expect(value["c"]?["d"] == .number(0.25))
    }

    @Test(
        "Malformed documents are rejected",
        arguments: ["", "{", "{\"a\":}", "[1,]", "01", "\"\\x\"", "{\"a\":1} x", "nul", "\"\u{01}\""]
    )
    func malformed(text: String) {
        #expect(throws: JSONParser.SyntaxError.self) { try JSONParser.parse(Array(text.utf8)) }
    }

    @Test("Strings are read eight bytes at a time: a quote, backslash or control byte is found at every offset")
    func wordScanning() throws {
        for run in 0..<20 {
            let plain = String(repeating: "a", count: run)
            // An escape right after the run, then more plain text; non-ASCII text across words.
            let escaped = "{\"aps\":{\"k\":\"\(plain)\\n\(plain)é😀\(plain)\"},\"\(plain)\":\"\(plain)\\\"\"}"
            let index = try JSONParser.indexObject(Array(escaped.utf8), nestedKey: "aps")
            #expect(index.members.map(\.key) == ["aps", plain])
            #expect(
                try JSONParser.parse(Array(escaped.utf8))["aps"]?["k"]
                    == .string(plain + "\n" + plain + "é😀" + plain)
            )
            // A raw control byte inside a string is an error wherever it falls.
            for control: UInt8 in [0x00, 0x0A, 0x1F] {
                var bytes = Array("{\"aps\":{\"k\":\"\(plain)x\(plain)\"}}".utf8)
                let offset = 13 + run
                bytes[offset] = control
                #expect(throws: JSONParser.SyntaxError(offset: offset)) {
                    try JSONParser.indexObject(bytes, nestedKey: "aps")
                }
                #expect(throws: JSONParser.SyntaxError.self) { try JSONParser.parse(bytes) }
            }
            // An unterminated string is an error however long it runs.
            #expect(throws: JSONParser.SyntaxError.self) {
                try JSONParser.indexObject(Array("{\"aps\":\"\(plain)".utf8), nestedKey: "aps")
            }
        }
    }

    @Test("Hostile nesting is refused instead of exhausting the stack")
    func deepNesting() {
        let text = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        #expect(throws: JSONParser.SyntaxError.self) { try JSONParser.parse(Array(text.utf8)) }
    }
}
