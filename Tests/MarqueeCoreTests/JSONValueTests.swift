import Foundation
import MarqueeCore
import Testing

@Suite("JSON values")
struct JSONValueTests {
    @Test("objects keep key order and integers stay integers when serialized")
    func serializesFaithfully() {
        let value: JSONValue = [
            "homeTeamScore": 2, "awayTeamScore": 1, "period": "2nd half", "ratio": 0.5, "note": nil,
        ]
        #expect(
            value.jsonString == #"{"homeTeamScore":2,"awayTeamScore":1,"period":"2nd half","ratio":0.5,"note":null}"#
        )
    }

    @Test("strings are escaped as JSON requires")
    func escapes() throws {
        let value: JSONValue = ["quote\"": "line\nbreak\t\u{01}é"]
        #expect(value.jsonString == #"{"quote\"":"line\nbreak\t\u0001é"}"#)
        let decoded = try JSONDecoder().decode(JSONValue.self, from: Data(value.jsonBytes))
        #expect(decoded == value)
    }

    @Test("decoding and encoding again gives the same value")
    func roundTrip() throws {
        let json = #"{"a":[1,2.5,"x",true,null,{"b":{}}],"c":"d"}"#
        let value = try JSONDecoder().decode(JSONValue.self, from: Data(json.utf8))
        let again = try JSONDecoder().decode(JSONValue.self, from: try JSONEncoder().encode(value))
        #expect(value == again)
        #expect(value["c"] == "d")
    }

    @Test("removing a key removes it from the order too")
    func removal() {
        var object: JSONObject = ["a": 1, "b": 2]
        object["a"] = nil
        #expect(object.keys == ["b"])
        #expect(object.count == 1)
    }
}
