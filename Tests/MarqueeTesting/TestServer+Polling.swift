import Foundation

extension TestServer {
    /// Reads `path` until `done` holds for its JSON, calling `meanwhile` between reads, within
    /// `waitUntil`'s generous bound. One that never holds says what was read last and the server's
    /// last warnings, so that a failure on a loaded machine tells its cause.
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
        try await waitUntil(
            """
            \(what) (\(path)); read last: \(json)\nthe server's last \
            warnings:\n\(warnings.lines.suffix(20).joined(separator: "\n"))
            """,
            timeout: timeout
        ) {
            json = try await client.send("GET", path, key: key).json
            if done(json) { return true }
            meanwhile()
            return false
        }
        return json
    }
}
