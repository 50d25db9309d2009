import Foundation
import MarqueeAPNS
import MarqueeCore
import MarqueeEmulator
import MarqueeEngine
import MarqueeTesting
import Testing

/// Who may do what: every route confined to its key's app, roles checked within it.
@Suite("Tenancy and roles")
struct AccessTests {
    /// Every route that names one app's resource, as another app's keys would call it.
    static func routes(of app: TestApp, channelID: String) -> [(method: String, path: String, json: [String: Any]?)] {
        let token = String(repeating: "ab", count: 32)
        return [
            ("GET", "/v1/apps/\(app.id)", nil),
            ("PATCH", "/v1/apps/\(app.id)", ["name": "stolen"]),
            ("PUT", "/v1/apps/\(app.id)/signing-key", ["keyID": "ABCDE12345", "privateKey": "x"]),
            ("POST", "/v1/apps/\(app.id)/api-keys", ["role": "admin"]),
            ("GET", "/v1/apps/\(app.id)/api-keys", nil),
            ("DELETE", "/v1/apps/\(app.id)/api-keys/key_00000000000000000000000000000000", nil),
            ("GET", "/v1/events/shared-key", nil),
            ("POST", "/v1/events/shared-key/close", nil),
            ("DELETE", "/v1/events/shared-key", nil),
            ("GET", "/v1/events/shared-key/channels/sandbox", nil),
            ("GET", "/v1/channels/\(channelID)", nil),
            ("DELETE", "/v1/channels/\(channelID)", nil),
            ("GET", "/v1/push-to-start-tokens/\(token)?environment=sandbox&attributesType=MatchAttributes", nil),
            ("DELETE", "/v1/push-to-start-tokens/\(token)?environment=sandbox&attributesType=MatchAttributes", nil),
            ("GET", "/v1/activities/activity-1", nil),
            ("DELETE", "/v1/activities/activity-1", nil),
            (
                "PUT", "/v1/activities/activity-1/update-token",
                ["eventKey": "shared-key", "environment": "sandbox", "token": token]
            ),
        ]
    }

    @Test("another app's resources answer 404 on every route, and stay untouched", arguments: TestBackend.allCases)
    func tenantIsolation(backend: TestBackend) async throws {
        try await TestServer.run(backend) { server in
            let owner = try await server.makeApp("Owner")
            let intruder = try await server.makeApp("Intruder")
            let created = try await server.putEvent(owner, key: "shared-key")
            let channelID = try #require((created.json["channels"] as? [[String: Any]])?.first?["id"] as? String)
            let token = String(repeating: "ab", count: 32)
            _ = try await server.client.send(
                "PUT",
                "/v1/push-to-start-tokens/\(token)",
                key: owner.appKey,
                json: ["environment": "sandbox", "attributesType": "MatchAttributes"]
            )
            _ = try await server.client.send(
                "PUT",
                "/v1/activities/activity-1/update-token",
                key: owner.appKey,
                json: ["eventKey": "shared-key", "environment": "sandbox", "token": token]
            )
            for route in Self.routes(of: owner, channelID: channelID) {
                let response = try await server.client.send(
                    route.method,
                    route.path,
                    key: intruder.adminKey,
                    json: route.json
                )
                #expect(
                    response.status == 404,
                    "\(route.method) \(route.path) answered \(response.status): \(response.text)"
                )
            }
            // Nothing of the owner's changed.
            let event = try await server.client.send("GET", "/v1/events/shared-key", key: owner.publisherKey)
            #expect(event.json["state"] as? String == "scheduled")
            let app = try await server.client.send("GET", "/v1/apps/\(owner.id)", key: owner.adminKey)
            #expect(app.json["name"] as? String == "Owner")
            let tokenRead = try await server.client.send(
                "GET",
                "/v1/push-to-start-tokens/\(token)?environment=sandbox&attributesType=MatchAttributes",
                key: owner.appKey
            )
            #expect(tokenRead.status == 200)
            #expect(try await server.client.send("GET", "/v1/activities/activity-1", key: owner.appKey).status == 200)
            #expect(try server.emulator.channels(in: .sandbox).filter { !$0.isDeleted }.count == 1)
        }
    }

    @Test("roles: 401 without a key, 403 for a role that may not", arguments: [TestBackend.sqlite])
    func roles(backend: TestBackend) async throws {
        try await TestServer.run(backend) { server in
            let app = try await server.makeApp()
            let noKey = try await server.client.send("GET", "/v1/events")
            #expect(noKey.status == 401)
            #expect(noKey.json["type"] as? String == "/problems/unauthorized")
            #expect(
                try await server.client.send("GET", "/v1/events", key: "mq_000000000000_notakeynotakeynotakey").status
                    == 401
            )

            let appKeyPut = try await server.putEvent(
                TestApp(
                    id: app.id,
                    bundleID: app.bundleID,
                    adminKey: app.adminKey,
                    publisherKey: app.appKey,
                    appKey: app.appKey
                ),
                key: "x"
            )
            #expect(appKeyPut.status == 403)
            #expect(appKeyPut.json["type"] as? String == "/problems/forbidden")
            let publisherMakesKey = try await server.client.send(
                "POST",
                "/v1/apps/\(app.id)/api-keys",
                key: app.publisherKey,
                json: ["role": "admin"]
            )
            #expect(publisherMakesKey.status == 403)
            let deploymentPutsEvent = try await server.putEvent(
                TestApp(
                    id: app.id,
                    bundleID: app.bundleID,
                    adminKey: server.deploymentKey,
                    publisherKey: server.deploymentKey,
                    appKey: server.deploymentKey
                ),
                key: "x"
            )
            #expect(deploymentPutsEvent.status == 403)
            let appMakesApp = try await server.client.send(
                "POST",
                "/v1/apps",
                key: app.adminKey,
                json: ["name": "N", "bundleID": "com.example.n", "teamID": "TEAM123456", "environments": ["sandbox"]]
            )
            #expect(appMakesApp.status == 403)

            // A revoked key stops working at once.
            let keys = try await server.client.send("GET", "/v1/apps/\(app.id)/api-keys", key: app.adminKey)
            let publisher = try #require(
                (keys.json["apiKeys"] as? [[String: Any]])?.first { $0["role"] as? String == "publisher" }
            )
            let revoked = try await server.client.send(
                "DELETE",
                "/v1/apps/\(app.id)/api-keys/\(publisher["id"] as? String ?? "")",
                key: app.adminKey
            )
            #expect(revoked.status == 204)
            #expect(try await server.putEvent(app, key: "after-revoke").status == 401)
            // Keys are never shown again, only their public prefix.
            #expect(!keys.text.contains(app.publisherKey))
        }
    }
}
