import Foundation
import MarqueeCore
import Testing

@Suite("Percent-decoding")
struct PercentDecodingTests {
    static let texts = [
        "match", "", "a+b", "arsenal%20v%20chelsea", "%2F", "caf%C3%A9", "%c3%a9", "%", "a%2", "%zz", "%FF", "%00",
        "%C3", "é", "100%25",
    ]

    @Test("decodes as Foundation's removingPercentEncoding does", arguments: texts)
    func agreesWithFoundation(text: String) {
        #expect(PercentDecoding.decoded(text) == text.removingPercentEncoding)
        #expect(PercentDecoding.decoded(text[...]) == text.removingPercentEncoding)
    }
}
