import Foundation
import MarqueeCore
import MarqueeEmulator
import MarqueeTesting
import Testing

/// `jobs.startCollapseIDs`: every start push of an event carries one `apns-collapse-id`, derived
/// from the event, so that APNs keeps only the event's newest start for a device it cannot reach;
/// the emulator records what each push carried.
@Suite("Start pushes carry the event's collapse ID")
struct StartCollapseIDAPITests {
    /// The collapse ID of every start push the emulator received for `devices`, in order.
    static func collapseIDs(_ devices: [EmulatedDevice], emulator: APNSEmulator) -> [String?] {
        devices.flatMap { device in
            emulator.pushes(to: device.pushToStartTokens["MatchAttributes"] ?? "", in: .sandbox).map(\.collapseID)
        }
    }

    static func start(_ server: TestServer, _ app: TestApp, event: String) async throws {
        let started = try await server.client.send(
            "POST",
            "/v1/events/\(event)/starts",
            key: app.publisherKey,
            json: StartFanOutAPITests.startBody
        )
        #expect(started.status == 202)
        let job = try await StartFanOutAPITests.waitForJob(server, app, try #require(started.header("Location")))
        #expect(job["state"] as? String == "succeeded")
    }

    /// Waits until every job of the app has finished: a late joiner's start is in the ledger only
    /// once its job committed, and a start sent meanwhile would not know of it.
    static func jobsFinished(_ server: TestServer, _ app: TestApp) async throws {
        try await waitUntil("every job finished") {
            let jobs =
                try await server.client.send("GET", "/v1/jobs?limit=100", key: app.publisherKey).json["jobs"]
                as? [[String: Any]] ?? []
            return jobs.allSatisfy { $0["state"] as? String == "succeeded" }
        }
    }

    @Test(
        "the starts of one event, from two jobs, carry the same collapse ID: a prefix and the event ID's 32 hex digits",
        arguments: TestBackend.allCases
    )
    func oneCollapseIDPerEvent(backend: TestBackend) async throws {
        try await TestServer.run(backend) { server in
            let emulator = try server.emulator
            let app = try await server.makeApp()
            let created = try await server.putEvent(app, key: "match")
            #expect(created.status == 201)
            let eventID = try #require(created.json["id"] as? String)
            #expect(eventID.hasPrefix("evt_"))
            let expected = "marquee-start-" + eventID.dropFirst("evt_".count)
            #expect(expected.utf8.count <= APNSPayloadLimit.collapseIDBytes)

            let early = try await StartFanOutAPITests.devices(5, emulator: emulator, server: server, app: app)
            try await Self.start(server, app, event: "match")
            // Devices that come while the event is live get its start as late joiners (a job of
            // their own); a second start of the event then finds them in the ledger.
            let late = try await StartFanOutAPITests.devices(3, emulator: emulator, server: server, app: app)
            try await waitUntil("the late joiners' starts") { Self.collapseIDs(late, emulator: emulator).count == 3 }
            try await Self.jobsFinished(server, app)
            try await Self.start(server, app, event: "match")

            let ids = Self.collapseIDs(early + late, emulator: emulator)
            #expect(ids.count == 8, "one start per device")
            #expect(ids.allSatisfy { $0 == expected }, "\(ids)")

            // Another event's starts carry another one. Its devices also join the live match late,
            // under the match's own ID.
            #expect(try await server.putEvent(app, key: "derby").status == 201)
            let others = try await StartFanOutAPITests.devices(2, emulator: emulator, server: server, app: app)
            try await waitUntil("the match's late joiners") { Self.collapseIDs(others, emulator: emulator).count == 2 }
            try await Self.jobsFinished(server, app)
            try await Self.start(server, app, event: "derby")
            let otherIDs = Self.collapseIDs(others, emulator: emulator)
            #expect(otherIDs.count == 4)
            #expect(otherIDs.filter { $0 == expected }.count == 2, "\(otherIDs)")
            let derby = otherIDs.filter { $0 != expected }
            #expect(derby.count == 2 && Set(derby).count == 1, "\(otherIDs)")
            #expect(derby.allSatisfy { $0?.hasPrefix("marquee-start-") == true }, "\(otherIDs)")
        }
    }

    @Test("jobs.startCollapseIDs=false sends starts without one")
    func settingTurnsItOff() async throws {
        try await TestServer.run(.sqlite, settings: ["jobs.startCollapseIDs": "false"]) { server in
            let emulator = try server.emulator
            let app = try await server.makeApp()
            #expect(try await server.putEvent(app, key: "match").status == 201)
            let devices = try await StartFanOutAPITests.devices(4, emulator: emulator, server: server, app: app)
            try await Self.start(server, app, event: "match")
            let ids = Self.collapseIDs(devices, emulator: emulator)
            #expect(ids.count == 4)
            #expect(ids.allSatisfy { $0 == nil }, "\(ids)")
        }
    }
}
