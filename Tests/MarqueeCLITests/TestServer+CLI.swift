import Foundation
import MarqueeServer
import MarqueeTesting

extension TestServer {
    /// `marquee` pointed at this server, with `key` in MARQUEE_API_KEY.
    func cli(key: String?) -> CLI {
        CLI(server: started.baseURL, apiKey: key)
    }
}

/// A file in a fresh temporary folder, for the files commands read.
func temporaryFile(_ name: String, contents: String) throws -> URL {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
        "marquee-cli-\(UUID().uuidString.prefix(8))"
    )
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let url = folder.appendingPathComponent(name)
    try Data(contents.utf8).write(to: url)
    return url
}
