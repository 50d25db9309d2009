import Foundation
import MarqueeCore
import Testing

@Suite("UUID from canonical text")
struct UUIDCanonicalTests {
    @Test("reads what UUID(uuidString:) reads, in either case")
    func agreesWithFoundation() {
        for _ in 0..<200 {
            let uuid = UUID()
            #expect(UUID(canonical: uuid.uuidString) == uuid)
            #expect(UUID(canonical: uuid.uuidString.lowercased()) == uuid)
        }
        #expect(
            UUID(canonical: "00000000-0000-0000-0000-000000000000")
                == UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        )
        #expect(
            UUID(canonical: "FFFFFFFF-ffff-FfFf-0123-456789abcdef")
                == UUID(uuidString: "ffffffff-ffff-ffff-0123-456789ABCDEF")
        )
    }

    @Test(
        "refuses what UUID(uuidString:) refuses",
        arguments: [
            "",
            "0123456789abcdef0123456789abcdef",
            "01234567-89ab-cdef-0123-456789abcde",
            "01234567-89ab-cdef-0123-456789abcdef0",
            "0123456-789ab-cdef-0123-456789abcdef",
            "01234567_89ab_cdef_0123_456789abcdef",
            "01234567-89ab-cdef-0123-456789abcdeg",
            "{1234567-89ab-cdef-0123-456789abcdef}",
            "01234567-89ab-cdef-0123-456789abcdé",
        ]
    )
    func refuses(_ text: String) {
        #expect(UUID(canonical: text) == nil)
        #expect(UUID(uuidString: text) == nil)
    }

    @Test("is written in lower case as uuidString.lowercased() writes it, and reads back")
    func writesLowercase() {
        for uuid in [UUID(), UUID(), UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))]
            + (0..<100).map({ _ in UUID() })
        {
            #expect(uuid.lowercasedText == uuid.uuidString.lowercased())
            #expect(UUID(canonical: uuid.lowercasedText) == uuid)
        }
    }
}
