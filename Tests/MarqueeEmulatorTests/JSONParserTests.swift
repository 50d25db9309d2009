import MarqueeCore
@testable import MarqueeEmulator
import Testing

extension EmulatorTests {
    @Suite("The emulator's JSON parser keeps payloads exactly as sent")
    struct JSONParserTests {
        @Test("Key order, integers, doubles, escapes and nesting survive")
        func roundTrip() throws {
            let text = #"{"b":1,"a":[true,false,null,-2.5e3,"x\"\u00e9\ud83d\ude00"],"c":{"d":0.25}}"#
            let value = try JSONParser.parse(Array(text.utf8))
            guard case .object(let object) = value else { Issue.record("not an object"); return }
            #expect(object.keys == ["b", "a", "c"])
            #expect(object["b"] == .integer(1))
            #expect(object["a"] == [true, false, nil, .number(-2500), .string("x\"é😀")])
            #expect(value["c"]?["d"] == .number(0.25))
        }

        @Test("Malformed documents are rejected", arguments: ["", "{", "{\"a\":}", "[1,]", "01", "\"\\x\"", "{\"a\":1} x", "nul", "\"\u{01}\""])
        func malformed(text: String) {
            #expect(throws: JSONParser.SyntaxError.self) { try JSONParser.parse(Array(text.utf8)) }
        }

        @Test("Hostile nesting is refused instead of exhausting the stack")
        func deepNesting() {
            let text = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
            #expect(throws: JSONParser.SyntaxError.self) { try JSONParser.parse(Array(text.utf8)) }
        }
    }

}