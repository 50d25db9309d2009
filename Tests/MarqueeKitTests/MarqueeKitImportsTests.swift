import Foundation
import MarqueeTesting
import Testing

/// MarqueeKit is what apps add: it must bring nothing but Foundation (and ActivityKit on a device).
@Suite("MarqueeKit's imports")
struct MarqueeKitImportsTests {
    @Test("every MarqueeKit source imports Foundation, FoundationNetworking or ActivityKit, nothing else")
    func foundationOnly() throws {
        let folder = SourceTree.root.appendingPathComponent("Sources/MarqueeKit")
        let files = try #require(FileManager.default.enumerator(atPath: folder.path)).compactMap { $0 as? String }
            .filter { $0.hasSuffix(".swift") }
        #expect(files.count > 10)
        for file in files {
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            let imports = text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter {
                $0.hasPrefix("import ")
            }
            for line in imports {
                #expect(
                    ["import Foundation", "import FoundationNetworking", "import ActivityKit"].contains(line),
                    "\(file): \(line)"
                )
            }
        }
    }
}
