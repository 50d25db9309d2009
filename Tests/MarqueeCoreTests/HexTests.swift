import MarqueeCore
import Testing

@Suite("Hex")
struct HexTests {
    @Test("encodes lower-case and decodes either case back to the same bytes")
    func roundTrip() {
        let bytes: [UInt8] = [0x00, 0x0f, 0xa0, 0xff, 0x7e]
        #expect(Hex.encode(bytes) == "000fa0ff7e")
        #expect(Hex.decode("000FA0ff7E") == bytes)
    }

    @Test("odd lengths, empty text and other characters are not hex")
    func rejects() {
        #expect(!Hex.isHex(""))
        #expect(!Hex.isHex("abc"))
        #expect(!Hex.isHex("zz"))
        #expect(Hex.decode("0g") == nil)
    }
}
