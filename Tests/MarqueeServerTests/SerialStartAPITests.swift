import Foundation
import MarqueeCore
import MarqueeEmulator
import MarqueeTesting
import Testing

@testable import MarqueeServer

/// An event's starts take turns: a second start, and late joiners' starts, made while the first
/// start still sends, wait until it has committed what it sent, and then send only to devices the
/// ledger does not hold. No device ever gets two.
@Suite("Serial starts of one event")
struct SerialStartAPITests {
    @Test(
        "a second start and late joiners arriving while the first start is held back reach each device once",
        arguments: TestBackend.allCases
    )
    func startsTakeTurns(backend: TestBackend) async throws {
        try await TestServer.run(backend, settings: StartFanOutAPITests.patientRetries) { server in
            let emulator = try server.emulator
            let app = try await server.makeApp()
            #expect(try await server.putEvent(app, key: "match").status == 201)
            let kickOff = try LateJoinerAPITests.makeDevices(60, emulator, app)
            try await LateJoinerAPITests.register(kickOff, server: server, app: app, batch: true)

            // The kick-off start gets 20 devices started, then every push is answered "try later":
            // it stands still, unfinished, with 40 devices neither started nor in the ledger.
            StartFanOutAPITests.holdBack(after: 20, emulator)
            let first = try await server.client.send(
                "POST",
                "/v1/events/match/starts",
                key: app.publisherKey,
                json: LateJoinerAPITests.startBody()
            )
            let firstJob = try #require(first.header("Location"))
            let held = try await StartFanOutAPITests.waitForJob(server, app, firstJob) {
                (StartFanOutAPITests.progress($0, "accepted") ?? 0) >= 20
            }
            #expect(held["state"] as? String == "running")

            // Meanwhile: the producer starts the event again (same audience), and 10 devices join.
            let second = try await server.client.send(
                "POST",
                "/v1/events/match/starts",
                key: app.publisherKey,
                json: LateJoinerAPITests.startBody()
            )
            let secondJob = try #require(second.header("Location"))
            let late = try LateJoinerAPITests.makeDevices(10, emulator, app)
            try await LateJoinerAPITests.register(late, server: server, app: app, batch: false)
            let waiting = try await server.client.send("GET", secondJob, key: app.publisherKey).json
            #expect(waiting["state"] as? String == "pending", "the second start waits its turn: \(waiting)")

            emulator.removeAllFaults()
            let firstDone = try await StartFanOutAPITests.waitForJob(server, app, firstJob)
            let secondDone = try await StartFanOutAPITests.waitForJob(server, app, secondJob)
            #expect(firstDone["state"] as? String == "succeeded")
            #expect(secondDone["state"] as? String == "succeeded")
            #expect(StartFanOutAPITests.progress(firstDone, "accepted") == 60)
            let appID = try #require(PublicID.parseApp(app.id))
            let stored = try #require(try await server.store.event(appID: appID, externalKey: "match"))
            try await waitUntil("the late joiners started") {
                emulator.activities(in: .sandbox).count >= 70
            }
            // Each device once: the second start's audience was read after the first had committed.
            for device in emulator.startCounts(in: .sandbox) {
                #expect(
                    device.startsAccepted == 1 && device.activities == 1,
                    "device \(device.deviceID): \(device.startsAccepted) starts, \(device.activities) activities"
                )
            }
            #expect(emulator.startCounts(in: .sandbox).count == 70)
            #expect(StartFanOutAPITests.progress(secondDone, "accepted") ?? 0 <= 10)
            let lateJoinStarts = try await server.store.lateJoinStartCount(
                appID: appID,
                eventID: stored.id,
                environment: .sandbox
            )
            #expect(lateJoinStarts + (StartFanOutAPITests.progress(secondDone, "accepted") ?? 0) == 10)
        }
    }
}
