import Foundation
import MarqueeCore
import MarqueeEmulator
import MarqueeTesting
import Testing

/// A fan-out's retry back-off is a sleep on the service's clock: with a manual clock, what APNs
/// asked to retry waits until the test moves the time to its retry, then goes.
@Suite("Fan-out retries on the injected clock")
struct FanOutRetryClockAPITests {
    @Test(
        "starts APNs asked to retry wait for their back-off on the clock and go once it has passed",
        arguments: TestBackend.allCases
    )
    func retryWaitsForTheClock(backend: TestBackend) async throws {
        let clock = ManualWallClock()
        // A back-off no other wait of the service shares, so that the test sees the retry's sleep.
        let settings = ["jobs.pollMilliseconds": "50", "jobs.retryBaseMilliseconds": "7000"]
        try await TestServer.run(backend, settings: settings, clock: clock) { server in
            let emulator = try server.emulator
            let app = try await server.makeApp()
            #expect(try await server.putEvent(app, key: "match").status == 201)
            _ = try await StartFanOutAPITests.devices(10, emulator: emulator, server: server, app: app)
            // Four starts go through; APNs answers the other six "429, try later".
            StartFanOutAPITests.holdBack(after: 4, emulator)
            let sentAt = clock.now
            let started = try await server.client.send(
                "POST",
                "/v1/events/match/starts",
                key: app.publisherKey,
                json: StartFanOutAPITests.startBody
            )
            let location = try #require(started.header("Location"))

            let retryAt = sentAt.addingTimeInterval(7)
            try await waitUntil("the fan-out to wait on the clock for its retries") { clock.sleepers.contains(retryAt) }
            let waiting = try await server.client.send("GET", location, key: app.publisherKey).json
            #expect(waiting["state"] as? String == "running")
            #expect(StartFanOutAPITests.progress(waiting, "accepted") == 4)
            #expect(emulator.activities(in: .sandbox).count == 4)

            emulator.removeAllFaults()
            clock.advance(by: 7)
            let job = try await StartFanOutAPITests.waitForJob(server, app, location)
            #expect(job["state"] as? String == "succeeded")
            #expect(StartFanOutAPITests.progress(job, "accepted") == 10)
            #expect(emulator.activities(in: .sandbox).count == 10)
        }
    }
}
