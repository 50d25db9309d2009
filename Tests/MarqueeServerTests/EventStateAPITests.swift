import Foundation
import MarqueeTesting
import Testing

/// An event's state as the API shows it: `scheduled` until a start's first device accepts it, `live`
/// from then until it is closed, `ended` after.
@Suite("Event state")
struct EventStateAPITests {
    @Test(
        "an event is live from its start's first accepted device until it is closed, in the event and in the list",
        arguments: TestBackend.allCases
    )
    func liveFromTheFirstStart(backend: TestBackend) async throws {
        try await TestServer.run(backend) { server in
            let emulator = try server.emulator
            let app = try await server.makeApp()
            #expect(try await server.putEvent(app, key: "ars-che").status == 201)
            #expect(
                try await server.client.send("GET", "/v1/events/ars-che", key: app.publisherKey).json["state"]
                    as? String == "scheduled"
            )

            _ = try await StartFanOutAPITests.devices(3, emulator: emulator, server: server, app: app)
            let started = try await server.client.send(
                "POST",
                "/v1/events/ars-che/starts",
                key: app.publisherKey,
                json: StartFanOutAPITests.startBody
            )
            #expect(started.status == 202)
            let job = try await StartFanOutAPITests.waitForJob(server, app, try #require(started.header("Location")))
            #expect(StartFanOutAPITests.progress(job, "accepted") == 3)

            let live = try await server.client.send("GET", "/v1/events/ars-che", key: app.publisherKey)
            #expect(live.json["state"] as? String == "live")
            let listed = try await server.client.send("GET", "/v1/events?state=live", key: app.publisherKey)
            #expect((listed.json["events"] as? [[String: Any]])?.map { $0["eventKey"] as? String } == ["ars-che"])

            // Put again (an edit) while live: still live.
            #expect(try await server.putEvent(app, key: "ars-che").json["state"] as? String == "live")

            let closed = try await server.client.send("POST", "/v1/events/ars-che/close", key: app.publisherKey)
            #expect(closed.json["state"] as? String == "ended")
            #expect(
                try await server.client.send("GET", "/v1/events/ars-che", key: app.publisherKey).json["state"]
                    as? String == "ended"
            )
        }
    }

    @Test("a start nobody accepted leaves the event scheduled", arguments: TestBackend.allCases)
    func noAcceptedStart(backend: TestBackend) async throws {
        try await TestServer.run(backend) { server in
            let app = try await server.makeApp()
            #expect(try await server.putEvent(app, key: "empty-stand").status == 201)
            let started = try await server.client.send(
                "POST",
                "/v1/events/empty-stand/starts",
                key: app.publisherKey,
                json: StartFanOutAPITests.startBody
            )
            #expect(started.status == 202)
            _ = try await StartFanOutAPITests.waitForJob(server, app, try #require(started.header("Location")))
            #expect(
                try await server.client.send("GET", "/v1/events/empty-stand", key: app.publisherKey).json["state"]
                    as? String == "scheduled"
            )
        }
    }
}
