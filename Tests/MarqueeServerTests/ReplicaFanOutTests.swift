import Crypto
import Foundation
import MarqueeCore
import MarqueeEmulator
import MarqueeTesting
import NIOCore
import NIOPosix
import Testing

/// Two `marquee serve` processes on one PostgreSQL, as replicas run in production, sharing one
/// start fan-out.
@Suite("Replicas")
struct ReplicaFanOutTests {
    /// How long the shared fan-out may go without a token's outcome before the test gives up on it.
    static let stallPatience: Duration = .seconds(300)

    @Test("two serve processes on one PostgreSQL share a 50,000-token fan-out: both send, no token gets two starts")
    func twoProcessesShareAFanOut() async throws {
        let audience = 50_000
        // The emulator answers 50,000 starts from two other processes as fast as they come: on event
        // loops of its own, so that its work does not queue ahead of the I/O of every other test
        // in this process (their PostgreSQL connections and servers run on the shared loops).
        let emulatorLoops = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        var emulatorConfiguration = APNSEmulatorConfiguration()
        emulatorConfiguration.eventLoopGroup = emulatorLoops
        let emulator = APNSEmulator(configuration: emulatorConfiguration)
        try await emulator.start()
        defer {
            Task {
                await emulator.shutdown()
                try? await emulatorLoops.shutdownGracefully()
            }
        }
        let settings = [
            "jobs.partitions": "16",
            "jobs.pageSize": "500",
            // Each replica runs a few partitions at a time, so neither can take them all at once.
            "jobs.concurrency": "3",
            "jobs.pollMilliseconds": "200",
        ].merging(try emulator.customTargetSettings()) { _, new in new }
        try await TestServer.withDatabase(.postgres) { database in
            // The app, its event and its audience, set up through the API of a first server.
            let app = try await TestServer.run(on: database, settings: settings) { server in
                let app = try await server.makeApp()
                try emulator.register(app)
                #expect(try await server.putEvent(app, key: "final").status == 201)
                for batch in stride(from: 0, to: audience, by: 10_000) {
                    _ = try await StartFanOutAPITests.devices(
                        min(10_000, audience - batch),
                        emulator: emulator,
                        server: server,
                        app: app
                    )
                }
                return app
            }

            let first = try await ServeProcess.start(on: database, settings: settings)
            let second: ServeProcess
            let job: [String: Any]
            let location: String
            do {
                second = try await ServeProcess.start(on: database, settings: settings)
            } catch {
                await first.stop()
                throw error
            }
            // The replicas are stopped however the fan-out ends.
            do {
                (job, location) = try await Self.startAndWait(app, through: TestHTTPClient(baseURL: first.baseURL))
            } catch {
                await first.stop()
                await second.stop()
                throw error
            }
            await first.stop()
            await second.stop()

            #expect(job["state"] as? String == "succeeded")
            #expect(StartFanOutAPITests.progress(job, "accepted") == audience)
            let activities = emulator.activities(in: .sandbox)
            #expect(activities.count == audience)
            #expect(Set(activities.map(\.deviceID)).count == audience)
            // Both replicas finished partitions of it.
            let parent = try #require(location.split(separator: "/").last)
            for replica in [first, second] {
                #expect(replica.logText.contains("fan-out completed"), "a replica sent none of the fan-out: \(parent)")
            }
        }
    }

    /// Starts the fan-out through `client` and waits for it to end: its last state and location.
    /// Bounded by a stall rather than a total: a loaded machine sends slowly, a stuck job not at all.
    static func startAndWait(
        _ app: TestApp,
        through client: TestHTTPClient
    ) async throws -> (job: [String: Any], location: String) {
        let started = try await client.send(
            "POST",
            "/v1/events/final/starts",
            key: app.publisherKey,
            json: StartFanOutAPITests.startBody
        )
        #expect(started.status == 202)
        let location = try #require(started.header("Location"))
        var sent = -1
        var lastChange = ContinuousClock.now
        while true {
            let job = try await client.send("GET", location, key: app.publisherKey).json
            if ["succeeded", "failed", "cancelled"].contains(job["state"] as? String ?? "") { return (job, location) }
            let progress = (job["progress"] as? [String: Any] ?? [:]).values.compactMap { ($0 as? NSNumber)?.intValue }
                .reduce(0, +)
            if progress != sent {
                sent = progress
                lastChange = ContinuousClock.now
            } else if ContinuousClock.now - lastChange > stallPatience {
                Issue.record("the fan-out made no progress for \(stallPatience): \(job)")
                return (job, location)
            }
            try await Task.sleep(for: .milliseconds(250))
        }
    }
}
