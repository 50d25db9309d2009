/// Waits until `condition` holds, checking it again every 20 ms: for what a test waits on that
/// gives no answer to wait for (a job's progress, a metric, a counter of the emulator). The
/// deadline only bounds a hang: it is generous (300 s by default) because the suite runs many
/// servers at once on a small, loaded machine, and a test that passes never waits that long. A
/// wait that runs out throws, naming what was waited for.
public func waitUntil(
    _ what: @autoclosure () -> String,
    timeout: Duration = .seconds(300),
    _ condition: () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while try await !condition() {
        guard ContinuousClock.now < deadline else { throw TestSetupError("\(what()) did not happen in \(timeout)") }
        try await Task.sleep(for: .milliseconds(20))
    }
}
