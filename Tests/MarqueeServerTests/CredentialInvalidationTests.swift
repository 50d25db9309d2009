import Foundation
import MarqueeTesting
import Testing

/// A key each replica answers from memory (`CredentialCache`) stops working on every replica when
/// any one of them revokes it: two servers on one PostgreSQL, the change made on the first, the
/// key presented to the second (which remembered it) until it is refused.
@Suite("Credentials across replicas")
struct CredentialInvalidationTests {
    /// Keys are remembered far longer than the test may wait, so that only the replica hearing of
    /// the change can make the second one refuse a key in time.
    static let settings = ["auth.cacheSeconds": "3600"]

    @Test("a key revoked on one replica is refused on another; its replacement works there at once")
    func revocationReachesAnotherReplica() async throws {
        try await TestServer.withDatabase(.postgres) { database in
            try await TestServer.run(on: database, settings: Self.settings) { first in
                let app = try await first.makeApp()
                #expect(try await first.putEvent(app, key: "final").status == 201)
                try await TestServer.run(on: database, settings: Self.settings) { second in
                    let channelRead = "/v1/events/final/channels/sandbox"
                    // The second replica authenticates both keys and remembers them.
                    #expect(try await second.client.send("GET", channelRead, key: app.appKey).status == 200)
                    #expect(try await second.client.send("GET", "/v1/events", key: app.publisherKey).status == 200)

                    // The publisher key is revoked through the first replica.
                    let publisherID = try await Self.keyID(of: "publisher", app, on: first)
                    let revoked = try await first.client.send(
                        "DELETE",
                        "/v1/apps/\(app.id)/api-keys/\(publisherID)",
                        key: app.adminKey
                    )
                    #expect(revoked.status == 204)
                    try await waitUntil(
                        "the second replica refuses the key revoked on the first",
                        timeout: .seconds(30)
                    ) {
                        try await second.client.send("GET", "/v1/events", key: app.publisherKey).status == 401
                    }

                    // The app's key is rotated through the first replica: a new one, the old revoked.
                    let created = try await first.client.send(
                        "POST",
                        "/v1/apps/\(app.id)/api-keys",
                        key: app.adminKey,
                        json: ["role": "app", "label": "rotated"]
                    )
                    let newKey = try #require(created.json["key"] as? String)
                    #expect(try await second.client.send("GET", channelRead, key: newKey).status == 200)
                    let oldID = try await Self.keyID(of: "app", app, on: first, labelled: "app")
                    #expect(
                        try await first.client.send("DELETE", "/v1/apps/\(app.id)/api-keys/\(oldID)", key: app.adminKey)
                            .status == 204
                    )
                    try await waitUntil("the second replica refuses the app's rotated-out key", timeout: .seconds(30)) {
                        try await second.client.send("GET", channelRead, key: app.appKey).status == 401
                    }
                    #expect(try await second.client.send("GET", channelRead, key: newKey).status == 200)
                    // The first replica, which made the changes, refuses both old keys too.
                    #expect(try await first.client.send("GET", channelRead, key: app.appKey).status == 401)
                    #expect(try await first.client.send("GET", "/v1/events", key: app.publisherKey).status == 401)
                }
            }
        }
    }

    /// The ID of the app's key with this role (and label).
    static func keyID(
        of role: String,
        _ app: TestApp,
        on server: TestServer,
        labelled label: String? = nil
    ) async throws -> String {
        let keys = try await server.client.send("GET", "/v1/apps/\(app.id)/api-keys", key: app.adminKey)
        let key = try #require(
            (keys.json["apiKeys"] as? [[String: Any]])?.first {
                $0["role"] as? String == role && (label == nil || $0["label"] as? String == label)
                    && $0["revokedAt"] == nil
            }
        )
        return try #require(key["id"] as? String)
    }
}
