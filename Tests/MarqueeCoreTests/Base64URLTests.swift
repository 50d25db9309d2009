import Foundation
import MarqueeCore
import Testing

@Suite("Base64url")
struct Base64URLTests {
    @Test("encodes without padding in the URL alphabet and decodes back")
    func roundTrip() throws {
        let bytes: [UInt8] = [0xFB, 0xFF, 0xBF, 0x00, 0x01]
        let text = Base64URL.encode(bytes)
        #expect(text == "-_-_AAE")
        #expect(try #require(Base64URL.decode(text)) == Data(bytes))
    }

    @Test("refuses padding and impossible lengths", arguments: ["AAE=", "A", "AAAAA", "AA!A"])
    func refuses(text: String) {
        #expect(Base64URL.decode(text) == nil)
    }
}
