import Foundation
import Logging
import MarqueeCore
import MarqueeStorage
import MarqueeTesting
import Testing

@testable import MarqueeEngine

/// A replica that is told to stop lets its runs hand their jobs back, but never waits for them
/// without end: a run stuck on a send is named and cancelled once a lease's length has passed.
@Suite("Job worker shutdown")
struct JobWorkerShutdownTests {
    /// A run that does not notice the stop (a send that never comes back), only its cancellation.
    struct StuckHandler: JobHandler {
        static let kind = JobKind(rawValue: "test.stuck")
        let started: AsyncStream<Void>.Continuation
        let cancelled: AsyncStream<Void>.Continuation

        var kinds: Set<JobKind> { [Self.kind] }

        func run(_ job: Job, owner: String, stop: RunStop) async throws -> FanOutRunner.Ending {
            started.yield()
            // Iterating an unfinished stream ends only when the task is cancelled.
            for await _ in AsyncStream<Void>(Void.self, { _ in }) {}
            cancelled.yield()
            throw CancellationError()
        }
    }

    @Test(
        """
        a run that does not hand its job back is named and cancelled after a lease's length on the worker's clock,\
         and the worker stops
        """
    )
    func stuckRunIsCancelled() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "marquee-worker-\(UUID().uuidString.prefix(8))"
        )
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try await SQLiteStore.open(
            path: folder.appendingPathComponent("marquee.sqlite").path,
            configuration: StoreConfiguration(sealer: nil, migrations: .sources)
        )
        try await store.migrate()
        let app = App(
            name: "Scores",
            bundleID: "com.example.scores",
            teamID: "TEAM123456",
            environments: [.sandbox],
            createdAt: Date()
        )
        try await store.createApp(app)
        try await store.enqueueJob(
            Job(appID: app.id, kind: StuckHandler.kind, arguments: [:], dueAt: Date(), createdAt: Date())
        )

        let (started, startedContinuation) = AsyncStream<Void>.makeStream()
        let (cancelled, cancelledContinuation) = AsyncStream<Void>.makeStream()
        let warnings = FlightRecorder()
        // The worker's time stands still until the test moves it: the lease's length passes when
        // the test says so, not after a second of the machine's.
        let clock = ManualWallClock(Date())
        let lease = Duration.seconds(1)
        let worker = JobWorker(
            store: store,
            handlers: [StuckHandler(started: startedContinuation, cancelled: cancelledContinuation)],
            configuration: JobWorkerConfiguration(leaseDuration: lease, pollInterval: .milliseconds(50)),
            wakeup: JobWakeup(clock: clock),
            clock: clock,
            logger: warnings.logger(level: .warning)
        )
        let running = Task { try await worker.run() }
        var startedRuns = started.makeAsyncIterator()
        await startedRuns.next()

        running.cancel()
        let stoppedAt = clock.now
        let leaseLater = stoppedAt.addingTimeInterval(lease.timeInterval)
        try await waitUntil("the stopping worker to wait for its run until a lease's length has passed") {
            clock.sleepers.contains(leaseLater)
        }
        #expect(!warnings.lines.contains { $0.contains("did not hand their jobs back") }, "\(warnings.lines)")

        clock.advance(by: lease.timeInterval)
        try await running.value
        var cancelledRuns = cancelled.makeAsyncIterator()
        await cancelledRuns.next()
        let named = warnings.lines.filter { $0.contains("did not hand their jobs back") }
        #expect(named.count == 1, "\(warnings.lines)")
        #expect(named.first?.contains("job.ids") == true, "\(warnings.lines)")
        try await store.close()
    }
}
