import Foundation
import MarqueeAPNS
import MarqueeCore
import MarqueeEngine
import MarqueeTesting
import Testing

/// The channel-ID answer each replica serves from memory (`ChannelAnswerCache`) changes on every
/// replica when its channel does: two servers on one PostgreSQL, the channel deleted, replaced and
/// its event closed through the first, the answer read from the second (which remembered it) until
/// it says so. On one server of either store the change is answered at once.
@Suite("Channel-ID answers across replicas")
struct ChannelAnswerInvalidationTests {
    static let read = "/v1/events/derby/channels/sandbox"

    @Test("a channel deleted, replaced or closed on one replica is answered so on another, with a new ETag")
    func changesReachAnotherReplica() async throws {
        try await TestServer.withDatabase(.postgres) { database in
            try await TestServer.run(on: database) { first in
                let app = try await first.makeApp()
                #expect(try await first.putEvent(app, key: "derby").status == 201)
                try await TestServer.run(on: database) { second in
                    // The second replica reads the answer and remembers it: its ETag answers 304.
                    let original = try await second.client.send("GET", Self.read, key: app.appKey)
                    #expect(original.status == 200)
                    let originalTag = try #require(original.header("ETag"))
                    let originalChannel = try #require(original.json["channelID"] as? String)
                    let unchanged = try await second.client.send(
                        "GET",
                        Self.read,
                        key: app.appKey,
                        headers: ["If-None-Match": originalTag]
                    )
                    #expect(unchanged.status == 304)
                    #expect(unchanged.header("ETag") == originalTag)

                    // APNs loses the channel and the first replica's reconciliation marks it deleted.
                    let appRecord = try #require(try await first.store.apps().first { $0.bundleID == app.bundleID })
                    let apns = try await first.engine.clients.client(for: appRecord, environment: .sandbox)
                    try await apns.deleteChannel(bundleID: app.bundleID, channelID: originalChannel)
                    let reconciled = try await first.client.send(
                        "POST",
                        "/v1/channels/reconcile",
                        key: app.publisherKey,
                        json: ["environment": "sandbox", "deleteOrphans": false]
                    )
                    #expect(reconciled.status == 200)
                    #expect((reconciled.json["markedDeleted"] as? [String])?.count == 1)
                    try await waitUntil(
                        "the second replica answers 404 for the channel deleted on the first",
                        timeout: .seconds(30)
                    ) {
                        try await second.client.send("GET", Self.read, key: app.appKey).status == 404
                    }

                    // Putting the event again through the first replica makes a new channel.
                    #expect(try await first.putEvent(app, key: "derby").status == 200)
                    let replaced = try await second.poll(
                        Self.read,
                        key: app.appKey,
                        "the second replica answers the new channel",
                        timeout: .seconds(30)
                    ) {
                        ($0["channelID"] as? String).map { $0 != originalChannel } ?? false
                    }
                    let current = try await second.client.send(
                        "GET",
                        Self.read,
                        key: app.appKey,
                        headers: ["If-None-Match": originalTag]
                    )
                    #expect(current.status == 200)
                    #expect(current.json["channelID"] as? String == replaced["channelID"] as? String)
                    let currentTag = try #require(current.header("ETag"))
                    #expect(currentTag != originalTag)
                    #expect(
                        try await second.client.send(
                            "GET",
                            Self.read,
                            key: app.appKey,
                            headers: ["If-None-Match": currentTag]
                        ).status == 304
                    )
                    #expect(try await first.client.send("GET", Self.read, key: app.appKey).header("ETag") == currentTag)

                    // Closing the event on the first replica deletes its channel: 404 on the second.
                    #expect(
                        try await first.client.send("POST", "/v1/events/derby/close", key: app.publisherKey).status
                            == 200
                    )
                    try await waitUntil(
                        "the second replica answers 404 for the event closed on the first",
                        timeout: .seconds(30)
                    ) {
                        try await second.client.send("GET", Self.read, key: app.appKey).status == 404
                    }
                }
            }
        }
    }

    @Test("on one server the answer changes at once with its channel", arguments: TestBackend.allCases)
    func changesAnsweredAtOnce(backend: TestBackend) async throws {
        try await TestServer.run(backend) { server in
            let app = try await server.makeApp()
            #expect(try await server.putEvent(app, key: "derby").status == 201)
            let first = try await server.client.send("GET", Self.read, key: app.appKey)
            #expect(first.status == 200)
            let tag = try #require(first.header("ETag"))
            #expect(first.header("Content-Type") == "application/json; charset=utf-8")
            #expect(first.header("Cache-Control") == "private, max-age=60")
            #expect(first.json["eventKey"] as? String == "derby")
            #expect(first.json["environment"] as? String == "sandbox")
            #expect(first.json["state"] as? String == "active")
            #expect(first.json["storagePolicy"] as? String == "mostRecentMessage")
            #expect((first.json["createdAt"] as? String)?.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/) != nil)
            // HEAD takes the generated route: the same headers as the GET answered from memory.
            let head = try await server.client.send("HEAD", Self.read, key: app.appKey)
            #expect(head.status == 200)
            #expect(head.header("ETag") == tag)
            #expect(head.header("Cache-Control") == first.header("Cache-Control"))
            #expect(head.header("Content-Type") == first.header("Content-Type"))
            let unchanged = try await server.client.send(
                "GET",
                Self.read,
                key: app.appKey,
                headers: ["If-None-Match": tag]
            )
            #expect(unchanged.status == 304)
            #expect(unchanged.header("ETag") == tag)
            #expect(unchanged.header("Cache-Control") == first.header("Cache-Control"))
            // Roles as the operation takes them: a publisher's key reads it, a deployment key may not.
            #expect(try await server.client.send("GET", Self.read, key: app.publisherKey).header("ETag") == tag)
            #expect(try await server.client.send("GET", Self.read, key: server.deploymentKey).status == 403)
            // Another app's key reads its own events: the remembered answer is not its.
            let other = try await server.makeApp("Other")
            #expect(try await server.client.send("GET", Self.read, key: other.appKey).status == 404)

            #expect(try await server.client.send("POST", "/v1/events/derby/close", key: app.publisherKey).status == 200)
            #expect(
                try await server.client.send("GET", Self.read, key: app.appKey, headers: ["If-None-Match": tag]).status
                    == 404
            )
        }
    }
}
