import Foundation

extension TestServer {
    /// Reads `path` until `done` holds for its JSON, calling `meanwhile` between reads. The wait is
    /// generous (300 s by default) because the suite runs many servers at once on a small machine;
    /// a test that passes never waits that long.
    @discardableResult
    public func poll(
        _ path: String,
        key: String,
        _ what: String,
        timeout: Duration = .seconds(300),
        meanwhile: () -> Void = {},
        until done: ([String: Any]) -> Bool
    ) async throws -> [String: Any] {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let json = try await client.send("GET", path, key: key).json
            if done(json) { return json }
            meanwhile()
            try await Task.sleep(for: .milliseconds(20))
        }
        throw TestSetupError("\(what) did not happen in \(timeout) (\(path))")
    }
}
