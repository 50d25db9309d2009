import Foundation
import MarqueeAPNS
import MarqueeCore
import MarqueeEmulator
import MarqueeEngine
import MarqueeTesting
import Testing

/// An event's channels as APNs (the emulator) sees them, driven through the API.
@Suite("Events and their channels at APNs")
struct ChannelLifecycleAPITests {
    @Test(
        "creating an event creates one channel per environment; deleting it deletes them",
        arguments: TestBackend.allCases
    )
    func lifecycle(backend: TestBackend) async throws {
        try await TestServer.run(backend) { server in
            let app = try await server.makeApp()
            let created = try await server.putEvent(app, key: "ars-che", environments: ["sandbox", "production"])
            #expect(created.status == 201)
            let channels = created.json["channels"] as? [[String: Any]] ?? []
            #expect(channels.count == 2)
            let emulator = try server.emulator
            let sandboxChannels = emulator.channels(in: .sandbox).filter { !$0.isDeleted }
            #expect(sandboxChannels.count == 1)
            #expect(emulator.channels(in: .production).filter { !$0.isDeleted }.count == 1)

            // Apps read the channel ID, cacheably.
            let read = try await server.client.send("GET", "/v1/events/ars-che/channels/sandbox", key: app.appKey)
            #expect(read.status == 200)
            #expect(read.json["channelID"] as? String == sandboxChannels.first?.id)
            let etag = try #require(read.header("ETag"))
            #expect(etag.hasPrefix("\"") && etag.hasSuffix("\""))
            #expect(read.header("Cache-Control") == "private, max-age=60")
            // No timeline will close this event: its channel lives until the producer closes it.
            #expect(read.json["expiresAt"] == nil)
            #expect(read.json["createdAt"] is String)
            let again = try await server.client.send(
                "GET",
                "/v1/events/ars-che/channels/sandbox",
                key: app.appKey,
                headers: ["If-None-Match": etag]
            )
            #expect(again.status == 304)

            // Putting it again changes nothing at APNs.
            let repeated = try await server.putEvent(app, key: "ars-che", environments: ["sandbox", "production"])
            #expect(repeated.status == 200)
            #expect(emulator.channels(in: .sandbox).filter { !$0.isDeleted }.count == 1)

            let live = try await server.client.send("GET", "/v1/live-events?environment=sandbox", key: app.appKey)
            #expect(
                (live.json["events"] as? [[String: Any]])?.first?["channelID"] as? String == sandboxChannels.first?.id
            )

            let deleted = try await server.client.send("DELETE", "/v1/events/ars-che", key: app.publisherKey)
            #expect(deleted.status == 204)
            #expect(emulator.channels(in: .sandbox).filter { !$0.isDeleted }.isEmpty)
            #expect(emulator.channels(in: .production).filter { !$0.isDeleted }.isEmpty)
            #expect(try await server.client.send("GET", "/v1/events/ars-che", key: app.publisherKey).status == 404)
        }
    }

    @Test("20 concurrent PUTs of one event create exactly one channel per environment", arguments: TestBackend.allCases)
    func concurrentPuts(backend: TestBackend) async throws {
        try await TestServer.run(backend) { server in
            let app = try await server.makeApp()
            let answers = try await withThrowingTaskGroup(of: TestHTTPClient.Response.self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        try await server.putEvent(app, key: "derby", environments: ["sandbox", "production"])
                    }
                }
                return try await group.reduce(into: [TestHTTPClient.Response]()) { $0.append($1) }
            }
            let statuses = answers.map(\.status)
            // Any other answer is shown with its problem, which says why.
            let others = answers.filter { $0.status != 201 && $0.status != 200 }.map {
                "\($0.status) \($0.text.prefix(300))"
            }
            #expect(statuses.filter { $0 == 201 }.count == 1, "\(statuses)")
            #expect(others.isEmpty, "\(others)")
            let emulator = try server.emulator
            #expect(emulator.channels(in: .sandbox).count == 1)
            #expect(emulator.channels(in: .production).count == 1)
        }
    }

    @Test("an APNs failure while creating leaves no event and no channel", arguments: TestBackend.allCases)
    func apnsFailureLeavesNothing(backend: TestBackend) async throws {
        try await TestServer.run(backend) { server in
            let app = try await server.makeApp()
            let emulator = try server.emulator
            emulator.injectFault(
                APNSEmulatorFault(
                    .respond(.internalServerError),
                    endpoints: [.channelManagement],
                    environments: [.production]
                )
            )
            let failed = try await server.putEvent(app, key: "cup-final", environments: ["sandbox", "production"])
            #expect(failed.status == 503)
            #expect(failed.header("Content-Type") == "application/problem+json")
            #expect(failed.json["type"] as? String == "/problems/apns-unavailable")
            // The sandbox channel made before the failure was deleted again; nothing is unknown.
            #expect(emulator.channels(in: .sandbox).filter { !$0.isDeleted }.isEmpty)
            #expect(emulator.channels(in: .production).isEmpty)
            #expect(try await server.client.send("GET", "/v1/events/cup-final", key: app.publisherKey).status == 404)

            emulator.removeAllFaults()
            let retried = try await server.putEvent(app, key: "cup-final", environments: ["sandbox", "production"])
            #expect(retried.status == 201)
            #expect(emulator.channels(in: .production).filter { !$0.isDeleted }.count == 1)
        }
    }

    @Test(
        "a channel APNs made but Marquee never recorded (a crash) is found and deleted",
        arguments: TestBackend.allCases
    )
    func crashBetweenAnswerAndCommit(backend: TestBackend) async throws {
        try await TestServer.run(backend) { server in
            let app = try await server.makeApp()
            #expect(try await server.putEvent(app, key: "known").status == 201)
            // What a crash between APNs' answer and the commit leaves: a channel at APNs no row knows.
            let appRecord = try #require(try await server.store.apps().first { $0.bundleID == app.bundleID })
            let client = try await server.engine.clients.client(for: appRecord, environment: .sandbox)
            let leaked = try await client.createChannel(bundleID: app.bundleID, storagePolicy: .noMessageStored)

            let report = try await server.client.send(
                "POST",
                "/v1/channels/reconcile",
                key: app.publisherKey,
                json: ["environment": "sandbox", "deleteOrphans": true]
            )
            #expect(report.status == 200)
            #expect(report.json["orphansRecorded"] as? [String] == [leaked.channelID])
            #expect(report.json["orphansDeleted"] as? [String] == [leaked.channelID])
            #expect(report.json["unchanged"] as? Int == 1)
            let emulator = try server.emulator
            let remaining = emulator.channels(in: .sandbox).filter { !$0.isDeleted }.map(\.id)
            #expect(!remaining.contains(leaked.channelID))
            #expect(remaining.count == 1)
        }
    }

    @Test(
        "the quota refuses a channel past the cap with a problem that says what to do",
        arguments: [TestBackend.sqlite]
    )
    func quota(backend: TestBackend) async throws {
        try await TestServer.run(backend, settings: ["channels.limit": "2"]) { server in
            let app = try await server.makeApp()
            #expect(try await server.putEvent(app, key: "one").status == 201)
            #expect(try await server.putEvent(app, key: "two").status == 201)
            let refused = try await server.putEvent(app, key: "three")
            #expect(refused.status == 409)
            #expect(refused.json["type"] as? String == "/problems/channel-quota-exceeded")
            #expect(try await server.client.send("GET", "/v1/events/three", key: app.publisherKey).status == 404)
            let quota = try await server.client.send("GET", "/v1/channels/quota", key: app.publisherKey)
            let sandbox = (quota.json["quotas"] as? [[String: Any]])?.first {
                $0["environment"] as? String == "sandbox"
            }
            #expect(sandbox?["used"] as? Int == 2)
            #expect(sandbox?["warning"] as? Bool == true)
        }
    }
}
