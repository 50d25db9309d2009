import Foundation
import NIOCore
import NIOHPACK
import Testing

@testable import MarqueeAPNS

/// How the client decodes the header blocks APNs answers with: RFC 7541's own examples, block after
/// block from a general encoder (NIOHPACK's, Huffman coding and indexing as it likes), and the
/// blocks §4 to §6 make errors.
@Suite("HPACK decoding of APNs' answers")
struct APNSHPACKDecoderTests {
    static func decoder(allowedTableSize: Int = 4096) -> APNSHPACKDecoder {
        APNSHPACKDecoder(allowedTableSize: allowedTableSize, maximumHeaderListSize: 16_384)
    }

    static func decode(_ bytes: [UInt8], with decoder: inout APNSHPACKDecoder) throws -> APNSResponse {
        try decoder.decodeResponse(ByteBuffer(bytes: bytes))
    }

    @Test("RFC 7541 C.6: three Huffman-coded responses in a 256-octet table, its size after each as the RFC gives it")
    func rfcResponsesWithHuffmanCoding() throws {
        var decoder = Self.decoder(allowedTableSize: 256)
        let first: [UInt8] = [
            0x48, 0x82, 0x64, 0x02, 0x58, 0x85, 0xae, 0xc3, 0x77, 0x1a, 0x4b, 0x61, 0x96, 0xd0, 0x7a, 0xbe, 0x94, 0x10,
            0x54, 0xd4, 0x44, 0xa8, 0x20, 0x05, 0x95, 0x04, 0x0b, 0x81, 0x66, 0xe0, 0x82, 0xa6, 0x2d, 0x1b, 0xff, 0x6e,
            0x91, 0x9d, 0x29, 0xad, 0x17, 0x18, 0x63, 0xc7, 0x8f, 0x0b, 0x97, 0xc8, 0xe9, 0xae, 0x82, 0xae, 0x43, 0xd3,
        ]
        let second: [UInt8] = [0x48, 0x83, 0x64, 0x0e, 0xff, 0xc1, 0xc0, 0xbf]
        let third: [UInt8] = [
            0x88, 0xc1, 0x61, 0x96, 0xd0, 0x7a, 0xbe, 0x94, 0x10, 0x54, 0xd4, 0x44, 0xa8, 0x20, 0x05, 0x95, 0x04, 0x0b,
            0x81, 0x66, 0xe0, 0x84, 0xa6, 0x2d, 0x1b, 0xff, 0xc0, 0x5a, 0x83, 0x9b, 0xd9, 0xab, 0x77, 0xad, 0x94, 0xe7,
            0x82, 0x1d, 0xd7, 0xf2, 0xe6, 0xc7, 0xb3, 0x35, 0xdf, 0xdf, 0xcd, 0x5b, 0x39, 0x60, 0xd5, 0xaf, 0x27, 0x08,
            0x7f, 0x36, 0x72, 0xc1, 0xab, 0x27, 0x0f, 0xb5, 0x29, 0x1f, 0x95, 0x87, 0x31, 0x60, 0x65, 0xc0, 0x03, 0xed,
            0x4e, 0xe5, 0xb1, 0x06, 0x3d, 0x50, 0x07,
        ]
        #expect(try Self.decode(first, with: &decoder).status == 302)
        #expect(decoder.tableSize == 222 && decoder.tableCount == 4)
        // `:status: 307` evicts the oldest entry; the other three fields come from the table.
        #expect(try Self.decode(second, with: &decoder).status == 307)
        #expect(decoder.tableSize == 222 && decoder.tableCount == 4)
        #expect(try Self.decode(third, with: &decoder).status == 200)
        #expect(decoder.tableSize == 215 && decoder.tableCount == 3)
    }

    @Test("RFC 7541 C.4.1's Huffman-coded www.example.com, and every byte value through NIOHPACK's encoder")
    func huffmanCode() throws {
        var output: [UInt8] = []
        let example: [UInt8] = [0xf1, 0xe3, 0xc2, 0xe5, 0xf2, 0x3a, 0x6b, 0xa0, 0xab, 0x90, 0xf4, 0xff]
        try example.withUnsafeBytes { try APNSHPACKHuffman.decode($0, appendingTo: &output) }
        #expect(String(decoding: output, as: UTF8.self) == "www.example.com")

        // Values of every byte, as an `apns-unique-id` the encoder Huffman-codes when that is shorter.
        var encoder = HPACKEncoder(allocator: ByteBufferAllocator(), useHuffmanEncoding: true)
        var decoder = Self.decoder()
        for start in stride(from: 0, to: 256, by: 16) {
            let value = String(decoding: (start..<start + 16).map { UInt8($0) }, as: UTF8.self)
            var block = ByteBuffer()
            try encoder.encode(headers: HPACKHeaders([(":status", "200"), ("apns-unique-id", value)]), to: &block)
            #expect(try decoder.decodeResponse(block).uniqueID == value)
        }
    }

    @Test("a thousand answers from a general encoder decode to their fields, through indexing, eviction and resizes")
    func answersFromAGeneralEncoder() throws {
        var encoder = HPACKEncoder(allocator: ByteBufferAllocator())
        var decoder = Self.decoder()
        var generator = SystemRandomNumberGenerator()
        let statuses = [200, 200, 200, 400, 403, 410, 429, 500]
        var previousIDs: [String] = []
        for answer in 0..<1_000 {
            if answer % 250 == 249 {
                // The encoder shrinks its table, then takes it back: a size update opens the next block.
                try encoder.setDynamicTableSize(answer % 500 == 249 ? 64 : 4096)
            }
            let status = statuses.randomElement(using: &generator)!
            // Identifiers again now and then, which the encoder then sends as indexed fields.
            let apnsID =
                previousIDs.isEmpty || Bool.random(using: &generator)
                ? UUID().uuidString.lowercased() : previousIDs.randomElement(using: &generator)!
            previousIDs = Array((previousIDs + [apnsID]).suffix(8))
            var fields: [(String, String)] = [
                (":status", "\(status)"), ("date", "Tue, 01 Dec 2026 17:\(answer % 60):00 GMT"), ("apns-id", apnsID),
            ]
            let channelID = answer % 3 == 0 ? "dHN0LTEyMzQ1Njc4OTA=" : nil
            let uniqueID = answer % 5 == 0 ? UUID().uuidString.lowercased() : nil
            let requestID = answer % 7 == 0 ? apnsID : nil
            if let channelID { fields.append(("apns-channel-id", channelID)) }
            if let uniqueID { fields.append(("apns-unique-id", uniqueID)) }
            if let requestID { fields.append(("apns-request-id", requestID)) }
            if status != 200 { fields.append(("content-type", "application/json")) }
            var block = ByteBuffer()
            try encoder.encode(headers: HPACKHeaders(fields), to: &block)

            let response = try decoder.decodeResponse(block)
            #expect(response.status == status)
            #expect(response.apnsID == apnsID)
            #expect(response.channelID == channelID && response.uniqueID == uniqueID)
            #expect(response.requestID == requestID)
            #expect(decoder.tableSize == encoder.dynamicTableSize)
        }
    }

    /// nginx's answers, block after block: the same Huffman-coded strings at the same places, but
    /// for the values that change (`apns-id` every time, the others now and then) and a field
    /// missing now and then, which moves every string after it to another place.
    @Test("strings repeated at their places in the block before decode as they did, changed ones as themselves")
    func repeatedStrings() throws {
        var encoder = HPACKEncoder(allocator: ByteBufferAllocator(), useHuffmanEncoding: true)
        var decoder = Self.decoder()
        for answer in 0..<100 {
            let apnsID = UUID().uuidString.lowercased()
            let uniqueID = "0a1b2c3d-\(answer / 7)-unique"
            var headers = HPACKHeaders()
            headers.add(name: ":status", value: "200")
            headers.add(name: "server", value: "nginx", indexing: .nonIndexable)
            if answer % 13 != 12 {
                headers.add(name: "date", value: "Tue, 01 Dec 2026 21:\(answer / 10):00 GMT", indexing: .nonIndexable)
            }
            headers.add(name: "apns-unique-id", value: uniqueID, indexing: .nonIndexable)
            headers.add(name: "apns-id", value: apnsID, indexing: .nonIndexable)
            var block = ByteBuffer()
            try encoder.encode(headers: headers, to: &block)

            let response = try decoder.decodeResponse(block)
            #expect(response.status == 200)
            #expect(response.uniqueID == uniqueID)
            #expect(response.apnsID == apnsID)
        }
        #expect(decoder.tableCount == 0)
    }

    @Test("a field whose indexed name is the entry its own insertion evicts keeps that name (§4.4)")
    func nameOfAnEvictedEntry() throws {
        // A 60-octet table holds one `apns-id: x` (7 + 1 + 32 = 40); the next `apns-id` field names it
        // by index 62 and, inserted, evicts it.
        var decoder = Self.decoder(allowedTableSize: 60)
        let first: [UInt8] = [0x40, 0x07] + Array("apns-id".utf8) + [0x01] + Array("x".utf8)
        let second: [UInt8] = [0x7E, 0x01] + Array("y".utf8)
        #expect(try Self.decode(first, with: &decoder).apnsID == "x")
        #expect(try Self.decode(second, with: &decoder).apnsID == "y")
        #expect(decoder.tableCount == 1 && decoder.tableSize == 40)
        // And the entry now in the table is the second field whole.
        #expect(try Self.decode([0xBE], with: &decoder).apnsID == "y")
    }

    @Test(
        "blocks §4 to §6 make errors",
        arguments: [
            ([0x80], .invalidIndex(0)),  // index 0
            ([0xBE], .invalidIndex(62)),  // an empty dynamic table
            ([0x88, 0x3F, 0xE1, 0x1F], .tableSizeUpdateAfterField),  // 4096 after `:status: 200`
            ([0x3F, 0xE1, 0x3F], .tableSizeUpdateAboveSetting(8192, allowed: 4096)),
            ([0x40, 0x05, 0x61], .truncated),  // a name of 5 octets with one there
            ([0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F], .integerOverflow),
            ([0x00, 0x81, 0xFF, 0x01, 0x61], .huffman(.invalidPadding)),  // 8 bits of padding
            ([0x00, 0x84, 0xFF, 0xFF, 0xFF, 0xFF, 0x01, 0x61], .huffman(.endOfStringSymbol)),
        ] as [([UInt8], APNSHPACKDecoder.DecodingError)]
    )
    func errors(block: [UInt8], error: APNSHPACKDecoder.DecodingError) {
        var decoder = Self.decoder()
        #expect(throws: error) { try decoder.decodeResponse(ByteBuffer(bytes: block)) }
    }

    @Test("a header list over the client's SETTINGS_MAX_HEADER_LIST_SIZE is refused")
    func headerListSize() throws {
        var decoder = APNSHPACKDecoder(maximumHeaderListSize: 100)
        let value = [UInt8](repeating: UInt8(ascii: "a"), count: 70)
        let block: [UInt8] = [0x88, 0x00, 0x01, 0x78, 0x46] + value  // 42 + (1 + 70 + 32)
        #expect(throws: APNSHPACKDecoder.DecodingError.headerListTooLarge(limit: 100)) {
            try decoder.decodeResponse(ByteBuffer(bytes: block))
        }
    }
}
