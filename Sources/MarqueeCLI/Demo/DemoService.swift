import Foundation
import Logging
import MarqueeServer
import ServiceLifecycle
import Synchronization
import UnixSignals

/// The service as `marquee serve` runs it on its embedded defaults (SQLite, the APNs emulator in
/// process), but in a folder of its own that is removed afterwards and on a free port of
/// 127.0.0.1: the demo never touches ./data, a running server's port, or the environment's
/// `MARQUEE_…` settings (a `MARQUEE_DATABASE_URL` must not send it to someone's PostgreSQL).
enum DemoService {
    /// Runs `body` against a service started for it, then shuts the service down gracefully (as
    /// SIGTERM would: the API, then the job worker, then APNs) and removes its folder.
    ///
    /// - Parameter cancellationSignals: signals that stop the demo where it is (Ctrl-C), so that
    ///   its folder is removed all the same.
    static func run<Result: Sendable>(
        logger: Logger,
        cancellationSignals: [UnixSignal] = [],
        _ body: @escaping @Sendable (MarqueeServer.Started) async throws -> Result
    ) async throws -> Result {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "marquee-demo-\(UUID().uuidString.prefix(8))"
        ).path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let configuration = try demoConfiguration(folder: folder)
        let (startedStream, startedContinuation) = AsyncStream<MarqueeServer.Started>.makeStream()
        let server = ClosureService {
            defer { startedContinuation.finish() }
            try await MarqueeServer.run(configuration: configuration, logger: logger, signals: []) { started in
                startedContinuation.yield(started)
            }
        }
        let outcome = Mutex<Result?>(nil)
        let demo = ClosureService {
            var iterator = startedStream.makeAsyncIterator()
            // No start: the service stopped first, and the group reports its error.
            guard let started = await iterator.next() else { return }
            // A Ctrl-C (below) shuts the group down gracefully, and this service first: the demo
            // stops where it is.
            let result = try await cancelWhenGracefulShutdown { try await body(started) }
            outcome.withLock { $0 = result }
        }
        // When the demo is done, or fails, the group shuts the service down gracefully: a
        // cancelled service would log its connections' teardown as errors.
        let group = ServiceGroup(
            configuration: .init(
                services: [
                    .init(service: server),
                    .init(
                        service: demo,
                        successTerminationBehavior: .gracefullyShutdownGroup,
                        failureTerminationBehavior: .gracefullyShutdownGroup
                    ),
                ],
                gracefulShutdownSignals: [],
                cancellationSignals: [],
                logger: logger
            )
        )
        let interrupted = try await run(group, stoppingOn: cancellationSignals)
        if interrupted {
            throw CLIFailure(
                .interrupted,
                "interrupted: the demo stopped where it was; its service is shut down and its folder removed"
            )
        }
        guard let result = outcome.withLock({ $0 }) else {
            throw CLIFailure(.unexpected, "the demo's service stopped before it listened")
        }
        return result
    }

    /// The demo's service: loopback on any free port, its own folder, no environment.
    private static func demoConfiguration(folder: String) throws -> ServerConfiguration {
        try ServerConfiguration.reading(
            [
                "http.host": "127.0.0.1",
                "http.port": "0",
                "data.dir": folder,
                // The demo's jobs are small and back to back: a worker that looks often keeps
                // each step from waiting on a poll.
                "jobs.pollMilliseconds": "20",
                "channels.janitorIntervalSeconds": "3600",
            ],
            environment: false
        )
    }

    /// Runs the group until it ends; true when a cancellation signal stopped it.
    private static func run(_ group: ServiceGroup, stoppingOn cancellationSignals: [UnixSignal]) async throws -> Bool {
        // The signals are watched here rather than by the group, so that a Ctrl-C is told apart
        // from a service that stopped by itself. It shuts the group down gracefully: the demo is
        // cancelled, then the service stops as SIGTERM stops it. Cancelling the whole group instead
        // cancelled the HTTP server while it was accepting the demo's connections, and
        // HummingbirdCore drops a connection accepted but not yet handled without finishing its
        // writer, which NIO treats as a programming error (the process crashed with SIGILL). A
        // second Ctrl-C does not wait for the shutdown: it cancels the group.
        let interrupted = InterruptionFlag()
        do {
            // Each task says whether it was the group's: only the group's end ends the wait.
            try await withThrowingTaskGroup(of: Bool.self) { tasks in
                tasks.addTask {
                    try await group.run()
                    return true
                }
                if !cancellationSignals.isEmpty {
                    tasks.addTask {
                        var signals = await UnixSignalsSequence(trapping: cancellationSignals).makeAsyncIterator()
                        guard await signals.next() != nil else { return false }
                        interrupted.raise()
                        await group.triggerGracefulShutdown()
                        if await signals.next() != nil { throw CancellationError() }
                        return false
                    }
                }
                while let groupEnded = try await tasks.next(), !groupEnded {}
                tasks.cancelAll()
            }
        } catch  where interrupted.isRaised {
            // What the cancellation made the demo throw; the interruption is the story.
        }
        return interrupted.isRaised
    }
}

/// Whether a cancellation signal came, set by the task that watches for them.
private final class InterruptionFlag: Sendable {
    private let raised = Mutex(false)

    func raise() { raised.withLock { $0 = true } }
    var isRaised: Bool { raised.withLock { $0 } }
}
