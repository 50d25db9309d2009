import Foundation
import MarqueeCore
import Testing

@Suite("JSON values")
struct JSONValueTests {
    @Test("objects keep key order and integers stay integers when encoded")
    func encodesFaithfully() throws {
        let value: JSONValue = ["homeTeamScore": 2, "awayTeamScore": 1, "period": "2nd half", "ratio": 0.5, "note": nil]
        let encoded = String(decoding: try JSONEncoder().encode(value), as: UTF8.self)
        #expect(encoded == #"{"homeTeamScore":2,"awayTeamScore":1,"period":"2nd half","ratio":0.5,"note":null}"#)
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
