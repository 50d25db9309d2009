import Foundation
import Synchronization
import Testing

/// `marquee serve` as a process of its own, on a test database: what a replica is in production.
/// Its standard output is read for the address it listens on; its log (standard error) is kept
/// for the test to read.
public final class ServeProcess: Sendable {
    public let baseURL: String
    private let process: Process
    private let log: SharedText

    /// The `marquee` executable next to the test bundle (`swift build` builds both into one folder).
    public static var executable: URL {
        get throws {
            let besideTests = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
                .deletingLastPathComponent().appendingPathComponent("marquee")
            let candidates = [besideTests, SourceTree.root.appendingPathComponent(".build/debug/marquee")]
            guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
                throw TestSetupError("no marquee executable at \(candidates.map(\.path)): run `swift build` first")
            }
            return found
        }
    }

    private init(process: Process, baseURL: String, log: SharedText) {
        self.process = process
        self.baseURL = baseURL
        self.log = log
    }

    /// Starts `marquee serve` on `database` with `settings` (configuration keys, passed as
    /// `MARQUEE_` environment variables) and waits until it listens.
    public static func start(on database: TestDatabase, settings: [String: String] = [:]) async throws -> ServeProcess {
        var values = [
            "http.port": "0",
            "data.dir": database.dataDirectory,
            "sql.dir": SourceTree.sqlDirectory,
            "secrets.masterKeys": database.masterKeys,
            "database.maxConnections": "8",
        ]
        values["database.url"] = database.url
        values.merge(settings) { _, new in new }

        let (process, output, log) = try launchable(values)
        let (addresses, continuation) = AsyncStream<String>.makeStream()
        let banner = SharedText()
        output.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            if data.isEmpty {
                continuation.finish()
                return
            }
            let text = banner.append(String(decoding: data, as: UTF8.self))
            if let address = listeningAddress(in: text) { continuation.yield(address) }
        }
        try process.run()
        let deadline = Task {
            try await Task.sleep(for: .seconds(60))
            continuation.finish()
        }
        defer { deadline.cancel() }
        for await address in addresses {
            return ServeProcess(process: process, baseURL: address, log: log)
        }
        process.terminate()
        throw TestSetupError("marquee serve did not say where it listens; its log:\n\(log.text)")
    }

    /// Runs `marquee serve` with `settings` where it must not start (a database it cannot use, a
    /// bad key) and waits up to a minute for it to exit: its exit status and log.
    public static func failingStart(settings: [String: String]) async throws -> (status: Int32, log: String) {
        let (process, _, log) = try launchable(settings.merging(["http.port": "0"]) { given, _ in given })
        try process.run()
        let deadline = ContinuousClock.now + .seconds(60)
        while process.isRunning, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        if process.isRunning {
            process.terminate()
            throw TestSetupError(
                "marquee serve was expected to stop, and still ran after a minute; its log:\n\(log.text)"
            )
        }
        // The pipe's handler may still be delivering the last lines.
        try await Task.sleep(for: .milliseconds(100))
        return (process.terminationStatus, log.text)
    }

    /// The `marquee serve` process for configuration `values` (as `MARQUEE_` environment
    /// variables, none inherited), its standard output, and its log as it comes.
    private static func launchable(_ values: [String: String]) throws -> (Process, Pipe, SharedText) {
        let process = Process()
        process.executableURL = try executable
        process.arguments = ["serve", "--log-level", "info"]
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("MARQUEE_") }
        for (key, value) in values { environment[environmentName(key)] = value }
        process.environment = environment
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors

        let log = SharedText()
        errors.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            if !data.isEmpty { log.append(String(decoding: data, as: UTF8.self)) }
        }
        return (process, output, log)
    }

    /// `http.port` → `MARQUEE_HTTP_PORT`, `secrets.masterKeys` → `MARQUEE_SECRETS_MASTER_KEYS`.
    static func environmentName(_ key: String) -> String {
        var name = "MARQUEE_"
        var previousIsLower = false
        for character in key {
            if character == "." {
                name += "_"
                previousIsLower = false
            } else if character.isUppercase {
                if previousIsLower { name += "_" }
                name += String(character)
                previousIsLower = false
            } else {
                name += character.uppercased()
                previousIsLower = character.isLowercase
            }
        }
        return name
    }

    private static func listeningAddress(in banner: String) -> String? {
        guard let line = banner.split(separator: "\n").first(where: { $0.hasPrefix("Marquee is listening on ") }) else {
            return nil
        }
        return line.dropFirst("Marquee is listening on ".count).split(separator: " ").first.map(String.init)
    }

    /// What the process has logged so far.
    public var logText: String { log.text }

    /// Stops it as an orchestrator does (SIGTERM) and waits for it to exit. One still running
    /// `stopPatience` later fails the test with its last log lines and is killed, rather than
    /// hanging the suite.
    public func stop() async {
        process.terminate()
        let deadline = ContinuousClock.now + Self.stopPatience
        while process.isRunning && ContinuousClock.now < deadline {
            // Not a sleep of this task's, which returns at once if the test was cancelled.
            await Task { try? await Task.sleep(for: .milliseconds(20)) }.value
        }
        guard process.isRunning else { return }
        let lines = log.text.split(separator: "\n").suffix(150).joined(separator: "\n")
        Issue.record(
            "marquee serve did not stop within \(Self.stopPatience) of SIGTERM; killed. Its last log lines:\n\(lines)"
        )
        await kill()
    }

    /// A bound on a hang, as `TestServer`'s: twice the default lease and APNs wait, and a minute.
    static let stopPatience: Duration = .seconds(140)

    /// Kills it as a crash does (SIGKILL): nothing is handed back.
    public func kill() async {
        Foundation.kill(process.processIdentifier, SIGKILL)
        await waitForExit()
    }

    private func waitForExit() async {
        while process.isRunning { try? await Task.sleep(for: .milliseconds(20)) }
    }
}

/// Text that pipe handlers append to on their own threads.
final class SharedText: Sendable {
    private let storage = Mutex("")

    /// Appends and returns the whole text.
    @discardableResult
    func append(_ more: String) -> String {
        storage.withLock { text in
            text += more
            return text
        }
    }

    var text: String { storage.withLock { $0 } }
}
