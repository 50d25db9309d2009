import MarqueeCore
import Testing

@Suite("An audience is split into ranges of row IDs")
struct AudiencePartitionTests {
    @Test("the parts are consecutive, open at both ends, and differ in width by at most one row")
    func evenSplit() {
        let parts = AudiencePartition.split(rowIDs: 101...1_100, into: 3)
        #expect(parts.map(\.afterRowID) == [nil, 433, 766])
        #expect(parts.map(\.throughRowID) == [433, 766, nil])
        let widths = [433 - 100, 766 - 433, 1_100 - 766]
        #expect(widths.max()! - widths.min()! <= 1)
    }

    @Test(
        "every row ID, including ones below and above the counted range, is in exactly one part",
        arguments: [1, 2, 7, 8]
    )
    func cover(count: Int) {
        let parts = AudiencePartition.split(rowIDs: 5...60, into: count)
        #expect(parts.count == count)
        for rowID in Int64(0)...100 {
            #expect(parts.filter { $0.contains(rowID) }.count == 1, "row \(rowID)")
        }
    }

    @Test("no more parts than rows, and one part for one row")
    func fewRows() {
        #expect(AudiencePartition.split(rowIDs: 9...11, into: 8).count == 3)
        #expect(
            AudiencePartition.split(rowIDs: 42...42, into: 8) == [AudiencePartition(afterRowID: nil, throughRowID: nil)]
        )
    }

    @Test("row IDs near the top of Int64 split without overflow")
    func hugeRowIDs() {
        let parts = AudiencePartition.split(rowIDs: 1...(Int64.max - 1), into: 8)
        #expect(parts.count == 8)
        #expect(zip(parts, parts.dropFirst()).allSatisfy { $0.throughRowID == $1.afterRowID })
        #expect(parts.dropLast().allSatisfy { ($0.throughRowID ?? 0) > 0 })
    }
}
