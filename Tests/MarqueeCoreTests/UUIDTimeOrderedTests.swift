import Foundation
import MarqueeCore
import Testing

@Suite("Time-ordered UUIDs")
struct UUIDTimeOrderedTests {
    @Test("are version 7 of RFC 9562's variant, with the date's milliseconds in their first 48 bits")
    func layout() {
        // 2025-12-02 02:55:00.123 UTC: 1,764,644,100,123 ms, so the UUID begins 019adcfc-181b-7.
        let date = Date(timeIntervalSince1970: 1_764_644_100.123_4)
        for _ in 0..<500 {
            let text = UUID.timeOrdered(at: date).lowercasedText
            let characters = Array(text)
            #expect(text.hasPrefix("019adcfc-181b-7"))
            #expect(characters[14] == "7")
            #expect(["8", "9", "a", "b"].contains(characters[19]))
            #expect(UUID(uuidString: text) != nil)
        }
    }

    @Test("sort by their dates, a few milliseconds apart")
    func order() {
        // Half a millisecond into each of every other millisecond: clear of a Double's rounding.
        let start = Date(timeIntervalSince1970: 1_764_644_100)
        let texts = (0..<1_000).map {
            UUID.timeOrdered(at: start.addingTimeInterval((Double($0) * 2 + 0.5) / 1000)).lowercasedText
        }
        #expect(texts == texts.sorted())
        #expect(Set(texts.map { $0.prefix(13) }).count == 1_000)
    }

    @Test("of one millisecond differ from each other in the bits left random")
    func distinct() {
        let date = Date(timeIntervalSince1970: 1_764_644_100)
        let uuids = Set((0..<10_000).map { _ in UUID.timeOrdered(at: date) })
        #expect(uuids.count == 10_000)
    }

    @Test("count a date before 1970 as 1970")
    func beforeTheEpoch() {
        let text = UUID.timeOrdered(at: Date(timeIntervalSince1970: -5)).lowercasedText
        #expect(text.hasPrefix("00000000-0000-7"))
    }
}
