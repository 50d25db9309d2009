import Foundation

extension TestServer {
    /// Reads `path` until `done` holds for its JSON, calling `meanwhile` between reads, within
    /// `waitUntil`'s generous bound.
    @discardableResult
    public func poll(
        _ path: String,
        key: String,
        _ what: String,
        timeout: Duration = .seconds(300),
        meanwhile: () -> Void = {},
        until done: ([String: Any]) -> Bool
    ) async throws -> [String: Any] {
        var json: [String: Any] = [:]
        try await waitUntil("\(what) (\(path))", timeout: timeout) {
            json = try await client.send("GET", path, key: key).json
            if done(json) { return true }
            meanwhile()
            return false
        }
        return json
    }
}
