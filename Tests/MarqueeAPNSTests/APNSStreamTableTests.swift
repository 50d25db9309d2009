import NIOHTTP2
import Testing

@testable import MarqueeAPNS

@Suite("Stream table")
struct APNSStreamTableTests {
    @Test("entries are found by stream ID and removed once")
    func insertFindRemove() {
        var table = APNSStreamTable<String>(minimumCapacity: 4)
        table.insert("one", for: 1)
        table.insert("three", for: 3)
        #expect(table[1] == "one")
        #expect(table[5] == nil)
        table[3] = "THREE"
        #expect(table.remove(3) == "THREE")
        #expect(table.remove(3) == nil)
        #expect(table.count == 1)
    }

    @Test("a slot still held by a slow stream blocks the stream ID that wraps onto it, until it finishes")
    func wrapAroundIsBackPressure() {
        var table = APNSStreamTable<Int>(minimumCapacity: 64)  // 64 slots: stream 1 and stream 129 share one
        table.insert(1, for: 1)
        #expect(!table.canInsert(129))
        #expect(table[129] == nil)
        table.remove(1)
        #expect(table.canInsert(129))
    }

    @Test("removing by predicate returns entries in stream-ID order")
    func removeAllInOrder() {
        var table = APNSStreamTable<Int>(minimumCapacity: 64)
        for id in stride(from: 1, through: 21, by: 2) { table.insert(id, for: HTTP2StreamID(Int32(id))) }
        #expect(table.removeAll { $0 > 11 } == [13, 15, 17, 19, 21])
        #expect(table.count == 6)
    }
}
