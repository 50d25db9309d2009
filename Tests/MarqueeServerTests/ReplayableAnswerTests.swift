import Foundation
import Testing

@testable import MarqueeServer

/// What an idempotent answer keeps for its replay: everything but an API key.
@Suite("Replayable answers")
struct ReplayableAnswerTests {
    @Test("an answer without a key is kept byte for byte")
    func plain() {
        let body = Array(#"{"id":"ev_1","key":"mq-final","title":"mq_"}"#.utf8)
        #expect(ReplayableAnswer.storable(body) == body)
    }

    @Test("a key creation's answer is kept without the key, its ID kept")
    func keyCreation() throws {
        let secret = "mq_0a1b2c3d4e5f_abcdefghijklmnopqrstuvwxyz012345"
        let body = Array(#"{"apiKey":{"id":"ak_1","role":"publisher"},"key":"\#(secret)"}"#.utf8)
        let stored = try #require(ReplayableAnswer.storable(body))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(stored)) as? [String: Any])
        #expect(object["key"] == nil)
        #expect((object["apiKey"] as? [String: Any])?["id"] as? String == "ak_1")
        #expect(!String(decoding: stored, as: UTF8.self).contains(secret))
    }

    @Test("a key anywhere, in arrays too, is taken out; a body that holds one and is not JSON is not kept")
    func nested() throws {
        let secret = "mq_0a1b2c3d4e5f_abcdefghijklmnopqrstuvwxyz012345"
        let body = Array(#"{"items":[{"k":"\#(secret)"},"\#(secret)","plain"]}"#.utf8)
        let stored = try #require(ReplayableAnswer.storable(body))
        #expect(!String(decoding: stored, as: UTF8.self).contains(secret))
        #expect(ReplayableAnswer.storable(Array("key: \(secret)".utf8)) == nil)
    }
}
