import NIOCore
import Testing

@testable import MarqueeAPNS

/// When a device push's repeating header fields may go as the bytes written for them last time,
/// and the integers and literals the framer writes around them (RFC 7541's own examples).
@Suite("HPACK bytes written again for a device push's repeating fields")
struct APNSHPACKRepeatCacheTests {
    static let fields = APNSDeviceHeaderFields.Repeating(
        scheme: "https",
        authority: "api.push.apple.com",
        authorization: "bearer ey.first",
        pushType: "liveactivity",
        topic: "com.example.match.push-type.liveactivity",
        priority: "10"
    )

    @Test(
        "only indexed field representations count as bytes that leave the table as it was",
        arguments: [
            ([0x82], true),
            ([0x82, 0x86, 0xBE], true),
            ([0xFF, 0x80, 0x01], true),  // index 255: a 7-bit prefix and two continuation bytes
            ([0xFF, 0x80], false),  // its continuation cut short
            ([0x82, 0x41, 0x01, 0x61], false),  // a literal with incremental indexing
            ([0x20, 0x82], false),  // a dynamic table size update first
            ([0x04, 0x01, 0x2F], false),  // a literal without indexing
            ([], false),
        ] as [([UInt8], Bool)]
    )
    func indexedOnly(_ bytes: [UInt8], _ expected: Bool) {
        #expect(APNSHPACKRepeatCache.isIndexedOnly(ByteBuffer(bytes: bytes)) == expected)
    }

    @Test("bytes are kept only if they are references, and given back only for the same fields in the same table")
    func generations() {
        var cache = APNSHPACKRepeatCache()
        let references = ByteBuffer(bytes: [0x82, 0x87, 0xBE])
        cache.encoded(Self.fields, as: ByteBuffer(bytes: [0x82, 0x41, 0x01, 0x61]))
        #expect(cache.bytes(for: Self.fields) == nil)

        cache.encoded(Self.fields, as: references)
        #expect(cache.bytes(for: Self.fields) == references)
        var other = Self.fields
        other.authorization = "bearer ey.second"
        #expect(cache.bytes(for: other) == nil)

        cache.tableChanged()
        #expect(cache.bytes(for: Self.fields) == nil)
        cache.encoded(Self.fields, as: references)
        #expect(cache.bytes(for: Self.fields) == references)
    }

    @Test("a size the server changes is pending until the next block is encoded, and drops what was cached")
    func sizeUpdates() {
        var cache = APNSHPACKRepeatCache()
        cache.encoded(Self.fields, as: ByteBuffer(bytes: [0x82]))
        cache.tableSizeChanged()
        #expect(cache.sizeUpdatePending)
        #expect(cache.bytes(for: Self.fields) == nil)
        cache.tableChanged()
        #expect(!cache.sizeUpdatePending)
    }

    @Test(
        "integers with an N-bit prefix (RFC 7541 C.1)",
        arguments: [
            (10, 5, [0x0A]),
            (1337, 5, [0x1F, 0x9A, 0x0A]),
            (42, 8, [0x2A]),
            (15, 4, [0x0F, 0x00]),
        ] as [(Int, Int, [UInt8])]
    )
    func integers(_ value: Int, _ prefixBits: Int, _ expected: [UInt8]) {
        var buffer = ByteBuffer()
        buffer.writeHPACKInteger(value, prefixBits: prefixBits, flags: 0)
        #expect(Array(buffer.readableBytesView) == expected)
    }

    @Test("a literal without indexing: a static name's index or a literal name, then the value as it is")
    func literals() {
        var buffer = ByteBuffer()
        buffer.writeHPACKLiteralWithoutIndexing(nameIndex: 4, value: "/3/device/ab")
        #expect(Array(buffer.readableBytesView) == [0x04, 12] + Array("/3/device/ab".utf8))
        buffer.clear()
        buffer.writeHPACKLiteralWithoutIndexing(name: "apns-id", value: "x")
        #expect(Array(buffer.readableBytesView) == [0x00, 7] + Array("apns-id".utf8) + [1, 0x78])
    }
}
