import Foundation
import MarqueeCore
import Testing

@Suite("Random UUIDs")
struct UUIDRandomTests {
    @Test("are version 4 of RFC 9562's variant, as Foundation's UUID() is")
    func versionAndVariant() {
        for _ in 0..<500 {
            let text = UUID.random().lowercasedText
            let characters = Array(text)
            #expect(characters[14] == "4")
            #expect(["8", "9", "a", "b"].contains(characters[19]))
            #expect(UUID(uuidString: text) != nil)
        }
    }

    @Test("differ from each other in the bits left random")
    func distinct() {
        let uuids = Set((0..<10_000).map { _ in UUID.random() })
        #expect(uuids.count == 10_000)
    }
}
