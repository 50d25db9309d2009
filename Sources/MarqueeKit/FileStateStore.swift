import Foundation

/// Keeps MarqueeKit's state as JSON in one file (Application Support on a device), replaced
/// atomically on each save so that a killed app never leaves half a file.
public struct FileStateStore: MarqueeKitStateStore {
    public let url: URL

    public init(url: URL) {
        self.url = url
    }

    /// `MarqueeKit/state.json` in the app's Application Support folder.
    public static func applicationSupport() throws -> FileStateStore {
        let folder = try FileManager.default.url(
            for: .applicationSupportDirectory,
            in: .userDomainMask,
            appropriateFor: nil,
            create: true
        )
        return FileStateStore(
            url: folder.appendingPathComponent("MarqueeKit", isDirectory: true).appendingPathComponent("state.json")
        )
    }

    public func load() throws -> MarqueeKitState? {
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        return try JSONDecoder().decode(MarqueeKitState.self, from: Data(contentsOf: url))
    }

    public func save(_ state: MarqueeKitState) throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try JSONEncoder().encode(state).write(to: url, options: .atomic)
    }
}
