import Crypto
import Foundation
import Logging
import MarqueeCore
import MarqueeEmulator
import MarqueeEngine
import MarqueeServer
import MarqueeStorage
import PostgresNIO
import ServiceLifecycleTestKit
import Synchronization
import Testing

/// A running `marquee serve` for a test: the real service on a free port of 127.0.0.1, on a fresh
/// store of the chosen backend, with the APNs emulator in-process, reached over real HTTP.
public struct TestServer: Sendable {
    public let started: MarqueeServer.Started
    public let backend: TestBackend
    public let client: TestHTTPClient
    /// The server's warnings and errors, whatever else its logger keeps: a test that sees it
    /// misbehave (a device started twice) shows them in its failure.
    public let warnings: FlightRecorder

    public var engine: MarqueeEngine { started.engine }
    public var store: any MarqueeStore { started.store }
    public var emulator: APNSEmulator {
        get throws {
            guard let emulator = started.emulator else {
                throw TestSetupError("the test server has no in-process emulator")
            }
            return emulator
        }
    }
    /// The first deployment key.
    public var deploymentKey: String { started.firstDeploymentKey ?? "" }

    /// Runs `body` against a server started for it, and stops the server afterwards.
    ///
    /// - Parameter logger: the server's logger; none by default (tests read answers, not logs).
    public static func run<Result: Sendable>(
        _ backend: TestBackend,
        settings: [String: String] = [:],
        clock: any WallClock = SystemWallClock(),
        logger: Logger? = nil,
        _ body: @Sendable (TestServer) async throws -> Result
    ) async throws -> Result {
        try await withDatabase(backend) { database in
            try await run(on: database, settings: settings, clock: clock, logger: logger, body)
        }
    }

    /// A fresh database of `backend` (and a data folder) that several servers can run on, one
    /// after the other or side by side (PostgreSQL): a restart, or replicas.
    public static func withDatabase<Result: Sendable>(
        _ backend: TestBackend,
        _ body: (TestDatabase) async throws -> Result
    ) async throws -> Result {
        try await backend.withDatabase { databaseURL, passwordURL in
            let dataDirectory = FileManager.default.temporaryDirectory
                .appendingPathComponent("marquee-test-\(UUID().uuidString.prefix(8))").path
            defer { try? FileManager.default.removeItem(atPath: dataDirectory) }
            return try await body(
                TestDatabase(
                    backend: backend,
                    url: databaseURL,
                    passwordURL: passwordURL,
                    dataDirectory: dataDirectory,
                    masterKeys: "test-1:\(MasterKey.generateBase64())"
                )
            )
        }
    }

    /// Runs `body` against a server started on `database`, and stops the server afterwards (as a
    /// crash would: by cancelling it).
    public static func run<Result: Sendable>(
        on database: TestDatabase,
        settings: [String: String] = [:],
        clock: any WallClock = SystemWallClock(),
        logger: Logger? = nil,
        _ body: @Sendable (TestServer) async throws -> Result
    ) async throws -> Result {
        let backend = database.backend
        let databaseURL = database.url
        let dataDirectory = database.dataDirectory
        do {
            var values = [
                "http.port": "0",
                "data.dir": dataDirectory,
                "sql.dir": SourceTree.sqlDirectory,
                "secrets.masterKeys": database.masterKeys,
                "channels.janitorIntervalSeconds": "3600",
                // Many servers run at once in the suite, all on one PostgreSQL: a small pool each
                // (the production default is 20) keeps them under its connection limit and spares
                // the 2 cores the logins (a pool waiting for connections PostgreSQL refuses stalls
                // its tests).
                "database.maxConnections": "\(PostgresTestCluster.testPoolSize)",
            ]
            values["database.url"] = databaseURL
            values.merge(settings) { _, new in new }
            let configuration = try ServerConfiguration.reading(values, environment: false)
            // The group in `serve` waits for its tasks, so `body` does not outlive this call.
            return try await withoutActuallyEscaping(body) { body in
                try await serve(configuration, backend: backend, clock: clock, logger: logger, body)
            }
        }
    }

    /// Runs the server and `body` side by side: a server that dies under the test fails it at
    /// once with its reason, instead of leaving the test to poll a closed port until its patience
    /// runs out. Afterwards the server is shut down gracefully, as SIGTERM stops `marquee serve`
    /// (its services in reverse order: the API, then the job worker finishing its sends in flight,
    /// then the APNs clients); cancelling it instead would stop the APNs clients beside the worker
    /// and leave its sends in flight uncertain. One that has not stopped within `stopPatience` is
    /// cancelled and fails the test with its last log lines instead of hanging the suite.
    private static func serve<Result: Sendable>(
        _ configuration: ServerConfiguration,
        backend: TestBackend,
        clock: any WallClock,
        logger: Logger?,
        _ body: @escaping @Sendable (TestServer) async throws -> Result
    ) async throws -> Result {
        let recorder = FlightRecorder()
        let warnings = FlightRecorder(capacity: 200)
        let (startedStream, startedContinuation) = AsyncStream<MarqueeServer.Started>.makeStream()
        let (endedStream, endedContinuation) = AsyncStream<Swift.Result<Void, any Error>>.makeStream()
        let ended = Mutex(false)
        let shutdown = Mutex<GracefulShutdownTestTrigger?>(nil)
        // Unstructured, so that a server that ignores its cancellation can be left behind.
        let server = Task {
            // Finished however the server stops, so that one that fails to start fails the test
            // instead of leaving it waiting.
            defer {
                startedContinuation.finish()
                ended.withLock { $0 = true }
                endedContinuation.finish()
            }
            await testGracefulShutdown { trigger in
                shutdown.withLock { $0 = trigger }
                do {
                    try await MarqueeServer.run(
                        configuration: configuration,
                        logger: Self.alsoRecordingWarnings(logger ?? Self.defaultLogger(recorder), in: warnings),
                        clock: clock,
                        signals: []
                    ) { started in
                        startedContinuation.yield(started)
                    }
                    endedContinuation.yield(.success(()))
                } catch {
                    endedContinuation.yield(.failure(error))
                }
            }
        }
        // The test's outcome, kept while the server stops: a failed test waits for it too.
        let outcome: Swift.Result<Result, any Error>
        do {
            outcome = .success(
                try await runBeside(
                    started: startedStream,
                    ended: endedStream,
                    backend: backend,
                    warnings: warnings,
                    body
                )
            )
        } catch {
            outcome = .failure(error)
        }
        if let trigger = shutdown.withLock({ $0 }) { trigger.triggerGracefulShutdown() } else { server.cancel() }
        let patience = stopPatience(configuration)
        let deadline = ContinuousClock.now + patience
        while !ended.withLock({ $0 }) && ContinuousClock.now < deadline {
            // Not a sleep of this task's, which returns at once if the test was cancelled.
            await Task { try? await Task.sleep(for: .milliseconds(20)) }.value
        }
        if !ended.withLock({ $0 }) {
            server.cancel()
            let lines = recorder.lines.suffix(150).joined(separator: "\n")
            Issue.record("the server did not stop within \(patience) of being cancelled; its last log lines:\n\(lines)")
        }
        return try outcome.get()
    }

    /// `body` against the server once it listens, beside a watch on its end: a server that stops
    /// first fails the test with its reason.
    private static func runBeside<Result: Sendable>(
        started: AsyncStream<MarqueeServer.Started>,
        ended: AsyncStream<Swift.Result<Void, any Error>>,
        backend: TestBackend,
        warnings: FlightRecorder,
        _ body: @escaping @Sendable (TestServer) async throws -> Result
    ) async throws -> Result {
        try await withThrowingTaskGroup(of: Result?.self) { group -> Result in
            group.addTask {
                // Iterating ends at once when the group is cancelled, whatever the server does.
                for await end in ended where !Task.isCancelled {
                    if case .failure(let error as PSQLError) = end {
                        // PostgresNIO's errors describe themselves generically on purpose; a
                        // failing test needs the whole story.
                        throw TestSetupError("the server stopped with an error: \(String(reflecting: error))")
                    }
                    try end.get()
                    throw TestSetupError("the server stopped while the test still used it")
                }
                return nil
            }
            var iterator = started.makeAsyncIterator()
            guard let started = await iterator.next() else {
                // The server stopped before it started: its error is the group's.
                try await group.waitForAll()
                throw TestSetupError("the server stopped before it listened")
            }
            let testServer = TestServer(
                started: started,
                backend: backend,
                client: TestHTTPClient(baseURL: started.baseURL),
                warnings: warnings
            )
            group.addTask { try await body(testServer) }
            defer { group.cancelAll() }
            while let next = try await group.next() {
                if let result = next { return result }
            }
            throw TestSetupError("the test ended without a result")
        }
    }

    /// How long a cancelled server may take to stop before the test fails, naming it: a bound on a
    /// hang, not a time the server is expected to take. Its job worker waits up to a lease's length
    /// for its runs to answer and commit their sends in flight (then cancels them), and its APNs
    /// clients up to 10 s more for the runs holding them; twice that and a minute, for a loaded
    /// machine (it was 60 s, barely more than the 40 s a stop may legitimately take by default).
    static func stopPatience(_ configuration: ServerConfiguration) -> Duration {
        (configuration.engine.jobs.leaseDuration + .seconds(10)) * 2 + .seconds(60)
    }
}

extension TestServer {
    /// Tests read answers, not logs: the servers' logs go to `recorder` (shown when a server does
    /// not stop), unless `MARQUEE_TEST_LOG_LEVEL` (trace … critical) asks for them on standard
    /// error, to see why a test hangs or fails.
    /// `logger`, with its warnings and errors also kept in `warnings`.
    static func alsoRecordingWarnings(_ logger: Logger, in warnings: FlightRecorder) -> Logger {
        let handler = logger.handler
        var kept = warnings.handler(keepingFrom: .warning)
        kept.logLevel = .warning
        // Each handler keeps its own level: the multiplexer passes a message to those it is for.
        return Logger(label: logger.label) { _ in MultiplexLogHandler([handler, kept]) }
    }

    static func defaultLogger(_ recorder: FlightRecorder) -> Logger {
        guard
            let level = ProcessInfo.processInfo.environment["MARQUEE_TEST_LOG_LEVEL"].flatMap(
                Logger.Level.init(rawValue:)
            )
        else {
            return recorder.logger()
        }
        var logger = Logger(label: "marquee.test", factory: { label in StreamLogHandler.standardError(label: label) })
        logger.logLevel = level
        return logger
    }
}

/// A database that outlives one server.
public struct TestDatabase: Sendable {
    public var backend: TestBackend
    /// `database.url`; `nil` for SQLite, whose file lives in `dataDirectory`.
    public var url: String?
    /// `url` for the user that authenticates with a password (SCRAM-SHA-256) as production does;
    /// `url`'s user is trusted on the test cluster. `nil` for SQLite.
    public var passwordURL: String?
    public var dataDirectory: String
    public var masterKeys: String
}

/// Paths inside the source checkout, found from this file.
public enum SourceTree {
    public static var root: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }
    public static var sqlDirectory: String { root.appendingPathComponent("sql").path }
}
