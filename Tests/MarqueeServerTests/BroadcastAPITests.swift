import Foundation
import MarqueeAPNS
import MarqueeCore
import MarqueeEmulator
import MarqueeEngine
import MarqueeTesting
import Testing

/// Broadcasts to an event's channels over the API, as the emulator's virtual devices show them.
@Suite("Channel broadcasts")
struct BroadcastAPITests {
    @Test(
        """
        after N broadcasts every subscribed iOS 18 activity shows the last state; timestamps strictly increase; \
        the log reads back newest first
        """,
        arguments: TestBackend.allCases
    )
    func broadcastsReachSubscribers(backend: TestBackend) async throws {
        try await TestServer.run(backend) { server in
            let app = try await server.makeApp()
            #expect(try await server.putEvent(app, key: "ars-che", environments: ["sandbox"]).status == 201)
            let emulator = try server.emulator
            let channelID = try #require(emulator.channels(in: .sandbox).first?.id)
            let activityIDs = try await startActivities(server, app: app, channelID: channelID, devices: 3)
            #expect(activityIDs.count == 3)

            let start = Int64(Date().timeIntervalSince1970)
            var timestamps: [Int64] = []
            var requestIDs: [String] = []
            for minute in 1...5 {
                let answer = try await broadcast(
                    server,
                    app,
                    ["event": "update", "contentState": ["home": minute, "away": 0, "minute": minute * 10]]
                )
                #expect(answer.status == 200, "\(answer.text)")
                let result = try #require((answer.json["results"] as? [[String: Any]])?.first)
                #expect(result["environment"] as? String == "sandbox")
                #expect(result["status"] as? String == "accepted")
                #expect(result["priority"] as? Int == 5)  // no alert, not important: the standard policy's 5
                #expect(result["downgraded"] as? Bool == false)
                #expect(result["channelID"] as? String == channelID)
                let expiration = try #require(result["apnsExpiration"] as? Int)
                #expect(
                    Int64(expiration) > start && Int64(expiration) <= Int64(Date().timeIntervalSince1970) + 8 * 3600
                )
                timestamps.append(Int64(try #require(result["timestamp"] as? Int)))
                requestIDs.append(try #require(result["apnsRequestID"] as? String))
            }
            #expect(zip(timestamps, timestamps.dropFirst()).allSatisfy { $0 < $1 }, "\(timestamps)")

            #expect(emulator.channels(in: .sandbox).first?.broadcastsReceived == 5)
            let activities = emulator.activities(in: .sandbox).filter { activityIDs.contains($0.id) }
            #expect(activities.count == 3)
            for activity in activities {
                #expect(activity.contentState?["home"] == .integer(5))
                #expect(activity.contentState?["minute"] == .integer(50))
            }
            // What APNs received, in order: one request per broadcast, with the timestamps answered.
            let sent = emulator.pushes(to: channelID, in: .sandbox).filter { $0.endpoint == .broadcast }
            #expect(sent.map(\.requestID) == requestIDs)
            #expect(sent.allSatisfy { ($0.expiration ?? 0) > 0 })

            // The log, newest first, two at a time.
            var logged: [[String: Any]] = []
            var path = "/v1/events/ars-che/channels/sandbox/broadcasts?limit=2"
            var pages = 0
            while true {
                let page = try await server.client.send("GET", path, key: app.publisherKey)
                #expect(page.status == 200, "\(page.text)")
                logged += page.json["broadcasts"] as? [[String: Any]] ?? []
                pages += 1
                guard let cursor = page.json["nextCursor"] as? String, pages < 10 else { break }
                #expect(page.header("Link")?.contains("rel=\"next\"") == true)
                path = "/v1/events/ars-che/channels/sandbox/broadcasts?limit=2&after=\(cursor)"
            }
            #expect(pages == 3)
            #expect(logged.compactMap { $0["apnsRequestID"] as? String } == requestIDs.reversed())
            #expect(logged.compactMap { ($0["timestamp"] as? Int).map(Int64.init) } == timestamps.reversed())
            #expect(logged.allSatisfy { $0["status"] as? Int == 200 && $0["latencyMicroseconds"] as? Int != nil })

            // The end, then the event closes as usual.
            let ended = try await broadcast(
                server,
                app,
                [
                    "event": "end", "contentState": ["home": 5, "away": 0, "minute": 90],
                    "dismissalDate": ISO8601DateFormatter().string(from: Date().addingTimeInterval(600)),
                ]
            )
            #expect(ended.status == 200, "\(ended.text)")
            #expect(
                emulator.activities(in: .sandbox).filter { activityIDs.contains($0.id) }.allSatisfy {
                    $0.phase == .ended
                }
            )
            let closed = try await server.client.send("POST", "/v1/events/ars-che/close", key: app.publisherKey)
            #expect(closed.status == 200)
            #expect(closed.json["state"] as? String == "ended")
        }
    }

    @Test("No Message Stored channels get apns-expiration 0", arguments: TestBackend.allCases)
    func noStorageExpiration(backend: TestBackend) async throws {
        try await TestServer.run(backend) { server in
            let app = try await server.makeApp()
            #expect(
                try await server.putEvent(app, key: "sprint", environments: ["sandbox"], storagePolicy: "noStorage")
                    .status == 201
            )
            let answer = try await broadcast(
                server,
                app,
                [
                    "event": "update", "contentState": ["lap": 3],
                    "staleDate": ISO8601DateFormatter().string(from: Date().addingTimeInterval(900)),
                ],
                key: "sprint"
            )
            #expect(answer.status == 200, "\(answer.text)")
            #expect((answer.json["results"] as? [[String: Any]])?.first?["apnsExpiration"] as? Int == 0)
            let emulator = try server.emulator
            let channelID = try #require(emulator.channels(in: .sandbox).first?.id)
            #expect(emulator.pushes(to: channelID, in: .sandbox).map(\.expiration) == [0])
        }
    }

    @Test(
        "past the hourly budget of priority-10 broadcasts Marquee sends at 5 and says so",
        arguments: TestBackend.allCases
    )
    func priorityBudget(backend: TestBackend) async throws {
        try await TestServer.run(backend, settings: ["broadcasts.priorityBudgetPerHour": "2"]) { server in
            let app = try await server.makeApp()
            #expect(try await server.putEvent(app, key: "ars-che", environments: ["sandbox"]).status == 201)
            var results: [[String: Any]] = []
            for goal in 1...3 {
                let body: [String: Any] =
                    goal == 3
                    ? [
                        "event": "update", "contentState": ["home": goal],
                        "alert": ["title": "Goal!", "body": "Arsenal \(goal)-0"],
                    ]
                    : ["event": "update", "contentState": ["home": goal], "important": true]
                let answer = try await broadcast(server, app, body)
                #expect(answer.status == 200, "\(answer.text)")
                results.append(try #require((answer.json["results"] as? [[String: Any]])?.first))
            }
            #expect(results.map { $0["priority"] as? Int } == [10, 10, 5])
            #expect(results.map { $0["requestedPriority"] as? Int } == [10, 10, 10])
            #expect(results.map { $0["downgraded"] as? Bool } == [false, false, true])
            #expect((results[2]["reason"] as? String)?.contains("budget") == true)

            let emulator = try server.emulator
            let channelID = try #require(emulator.channels(in: .sandbox).first?.id)
            #expect(emulator.pushes(to: channelID, in: .sandbox).map(\.priority) == [10, 10, 5])
            let log = try await server.client.send(
                "GET",
                "/v1/events/ars-che/channels/sandbox/broadcasts",
                key: app.publisherKey
            )
            let entries = log.json["broadcasts"] as? [[String: Any]] ?? []
            #expect(entries.map { $0["downgraded"] as? Bool } == [true, false, false])
            #expect(entries.map { $0["priority"] as? Int } == [5, 10, 10])
            // The log keeps the alert as APNs got it; the broadcasts without one have none.
            let alerts = entries.map { $0["alert"] as? [String: Any] }
            #expect(alerts[0]?["title"] as? String == "Goal!" && alerts[0]?["body"] as? String == "Arsenal 3-0")
            #expect(alerts.dropFirst().allSatisfy { $0 == nil })
        }
    }

    @Test(
        "an event's priority policy chooses the priority; putting the event without one keeps it",
        arguments: TestBackend.allCases
    )
    func eventPriorityPolicy(backend: TestBackend) async throws {
        try await TestServer.run(backend) { server in
            let app = try await server.makeApp()
            var event: [String: Any] = [
                "title": "Night flight", "attributesType": "FlightAttributes", "environments": ["sandbox"],
                "plannedStart": "2026-11-28T21:00:00Z", "plannedEnd": "2026-11-29T05:00:00Z",
                "priorityPolicy": "normal",
            ]
            let created = try await server.client.send("PUT", "/v1/events/ba-117", key: app.publisherKey, json: event)
            #expect(created.status == 201, "\(created.text)")
            #expect(created.json["priorityPolicy"] as? String == "normal")
            let alerted = try await broadcast(
                server,
                app,
                [
                    "event": "update", "contentState": ["gate": "B32"],
                    "alert": ["title": "Gate change", "body": "Now B32"],
                ],
                key: "ba-117"
            )
            #expect((alerted.json["results"] as? [[String: Any]])?.first?["priority"] as? Int == 5, "\(alerted.text)")

            event["priorityPolicy"] = nil
            let kept = try await server.client.send("PUT", "/v1/events/ba-117", key: app.publisherKey, json: event)
            #expect(kept.json["priorityPolicy"] as? String == "normal", "\(kept.text)")

            event["priorityPolicy"] = "immediate"
            let changed = try await server.client.send("PUT", "/v1/events/ba-117", key: app.publisherKey, json: event)
            #expect(changed.json["priorityPolicy"] as? String == "immediate", "\(changed.text)")
            let plain = try await broadcast(
                server,
                app,
                ["event": "update", "contentState": ["gate": "B34"]],
                key: "ba-117"
            )
            #expect((plain.json["results"] as? [[String: Any]])?.first?["priority"] as? Int == 10, "\(plain.text)")

            // Without a policy of its own an event follows the server's (standard).
            #expect(
                try await server.putEvent(app, key: "ars-che", environments: ["sandbox"]).json["priorityPolicy"] == nil
            )
        }
    }

    @Test(
        """
        a broadcast to a channel APNs deleted answers channel-gone and marks it deleted; putting the event again \
        makes a new one
        """,
        arguments: TestBackend.allCases
    )
    func deletedChannel(backend: TestBackend) async throws {
        try await TestServer.run(backend) { server in
            let app = try await server.makeApp()
            #expect(try await server.putEvent(app, key: "ars-che", environments: ["sandbox"]).status == 201)
            let emulator = try server.emulator
            let channelID = try #require(emulator.channels(in: .sandbox).first?.id)
            try await deleteAtAPNs(server, app: app, channelID: channelID, environment: .sandbox)

            let answer = try await broadcast(server, app, ["event": "update", "contentState": ["home": 1]])
            #expect(answer.status == 409, "\(answer.text)")
            #expect(answer.header("Content-Type") == "application/problem+json")
            #expect(answer.json["type"] as? String == "/problems/channel-gone")
            #expect(answer.json["apnsReason"] as? String == "ChannelNotRegistered")

            let event = try await server.client.send("GET", "/v1/events/ars-che", key: app.publisherKey)
            #expect((event.json["channels"] as? [[String: Any]])?.isEmpty == true)
            // The failed request is in the deleted channel's log.
            let log = try await server.client.send(
                "GET",
                "/v1/events/ars-che/channels/sandbox/broadcasts",
                key: app.publisherKey
            )
            let entry = try #require((log.json["broadcasts"] as? [[String: Any]])?.first)
            #expect(entry["status"] as? Int == 400)
            #expect(entry["apnsReason"] as? String == "ChannelNotRegistered")

            // Nothing is left to send to until the event is put again.
            let again = try await broadcast(server, app, ["event": "update", "contentState": ["home": 1]])
            #expect(again.json["type"] as? String == "/problems/channel-gone")
            #expect(try await server.putEvent(app, key: "ars-che", environments: ["sandbox"]).status == 200)
            #expect(try await broadcast(server, app, ["event": "update", "contentState": ["home": 1]]).status == 200)
        }
    }

    @Test(
        "closing an event whose channel a broadcast has just found gone and marked deleted still closes it",
        arguments: TestBackend.allCases
    )
    func closeRacingChannelGone(backend: TestBackend) async throws {
        try await TestServer.run(backend) { server in
            let app = try await server.makeApp()
            #expect(try await server.putEvent(app, key: "ars-che", environments: ["sandbox"]).status == 201)
            let owner = try #require(try await server.engine.apps.apps().first { $0.bundleID == app.bundleID })
            let event = try #require(try await server.store.event(appID: owner.id, externalKey: "ars-che"))
            let seenByClose = try #require(
                try await server.store.liveChannel(appID: owner.id, eventID: event.id, environment: .sandbox)
            )
            // Between the close reading the channel and deleting it, a broadcast met the channel
            // gone at APNs and marked it deleted.
            _ = try await server.store.transitionChannel(appID: owner.id, id: seenByClose.id, to: .deleted, at: Date())
            #expect(try await server.engine.channels.deleteChannel(app: owner, channel: seenByClose))

            let closed = try await server.client.send("POST", "/v1/events/ars-che/close", key: app.publisherKey)
            #expect(closed.status == 200, "\(closed.text)")
        }
    }

    @Test("a failure in one environment is a 207 with a result per environment", arguments: TestBackend.allCases)
    func partialFailure(backend: TestBackend) async throws {
        try await TestServer.run(backend) { server in
            let app = try await server.makeApp()
            #expect(
                try await server.putEvent(app, key: "ars-che", environments: ["sandbox", "production"]).status == 201
            )
            let emulator = try server.emulator
            let productionChannel = try #require(emulator.channels(in: .production).first?.id)
            try await deleteAtAPNs(server, app: app, channelID: productionChannel, environment: .production)

            let answer = try await broadcast(server, app, ["event": "update", "contentState": ["home": 2]])
            #expect(answer.status == 207, "\(answer.text)")
            let results = answer.json["results"] as? [[String: Any]] ?? []
            #expect(results.map { $0["environment"] as? String } == ["production", "sandbox"])
            #expect(results.map { $0["status"] as? String } == ["failed", "accepted"])
            #expect(results[0]["httpStatus"] as? Int == 400)
            #expect(results[0]["apnsReason"] as? String == "ChannelNotRegistered")
            #expect(results[0]["channelDeleted"] as? Bool == true)

            // Asking for sandbox alone is a plain 200.
            let sandboxOnly = try await broadcast(
                server,
                app,
                ["event": "update", "contentState": ["home": 3], "environments": ["sandbox"]]
            )
            #expect(sandboxOnly.status == 200, "\(sandboxOnly.text)")
        }
    }

    @Test("invalid broadcasts are refused before anything is sent", arguments: [TestBackend.sqlite])
    func invalidInput(backend: TestBackend) async throws {
        try await TestServer.run(backend) { server in
            let app = try await server.makeApp()
            #expect(try await server.putEvent(app, key: "ars-che", environments: ["sandbox"]).status == 201)
            func expectInvalid(
                _ body: [String: Any],
                pointer: String,
                sourceLocation: SourceLocation = #_sourceLocation
            ) async throws {
                let answer = try await broadcast(server, app, body)
                #expect(answer.status == 422, "\(answer.text)", sourceLocation: sourceLocation)
                let pointers =
                    (answer.json["errors"] as? [[String: Any]])?.compactMap { $0["pointer"] as? String } ?? []
                #expect(pointers.contains(pointer), "\(answer.text)", sourceLocation: sourceLocation)
            }
            let soon = ISO8601DateFormatter().string(from: Date().addingTimeInterval(60))
            try await expectInvalid(
                ["event": "update", "contentState": ["a": 1], "dismissalDate": soon],
                pointer: "/dismissalDate"
            )
            try await expectInvalid(
                ["event": "update", "contentState": ["a": 1], "environments": ["production"]],
                pointer: "/environments/0"
            )
            try await expectInvalid(
                ["event": "update", "contentState": ["a": 1], "priority": 5, "important": true],
                pointer: "/important"
            )
            try await expectInvalid(
                ["event": "update", "contentState": ["a": 1], "alert": ["title": "Goal"]],
                pointer: "/alert/body"
            )
            try await expectInvalid(
                ["event": "update", "contentState": ["text": String(repeating: "x", count: 6000)]],
                pointer: "/contentState"
            )
            #expect(try await broadcast(server, app, ["event": "start", "contentState": ["a": 1]]).status == 422)
            #expect(
                try await broadcast(server, app, ["event": "update", "contentState": ["a": 1], "surprise": 1]).status
                    == 422
            )
            // Only publishers broadcast.
            let asApp = try await server.client.send(
                "POST",
                "/v1/events/ars-che/broadcasts",
                key: app.appKey,
                json: ["event": "update", "contentState": ["a": 1]]
            )
            #expect(asApp.status == 403)
            #expect(try server.emulator.channels(in: .sandbox).first?.broadcastsReceived == 0)
        }
    }

    // MARK: Helpers

    private func broadcast(
        _ server: TestServer,
        _ app: TestApp,
        _ body: [String: Any],
        key: String = "ars-che"
    ) async throws -> TestHTTPClient.Response {
        try await server.client.send("POST", "/v1/events/\(key)/broadcasts", key: app.publisherKey, json: body)
    }

    private func appRecord(_ server: TestServer, _ app: TestApp) async throws -> App {
        try #require(try await server.store.apps().first { $0.bundleID == app.bundleID })
    }

    /// Starts an activity subscribed to the channel on each of `devices` new iOS 18 devices, as the
    /// start fan-out will: a push-to-start with `input-push-channel`, sent through the app's client.
    private func startActivities(
        _ server: TestServer,
        app: TestApp,
        channelID: String,
        devices: Int
    ) async throws -> Set<String> {
        let emulator = try server.emulator
        let client = try await server.engine.clients.client(
            for: try await appRecord(server, app),
            environment: .sandbox
        )
        for _ in 0..<devices {
            let device = try emulator.registerDevice(
                environment: .sandbox,
                bundleID: app.bundleID,
                iOSVersion: IOSVersion(18, 0),
                pushToStartAttributesTypes: ["MatchAttributes"]
            )
            let token = try #require(device.pushToStartTokens["MatchAttributes"])
            let payload = LiveActivityPayload.start(
                .init(
                    attributesType: "MatchAttributes",
                    attributes: ["home": "ARS", "away": "CHE"],
                    updates: .channel(channelID)
                ),
                contentState: ["home": 0, "away": 0, "minute": 0],
                alert: LiveActivityAlert(title: "Kick-off", body: "Arsenal v Chelsea"),
                // Earlier than the broadcasts: a device ignores an update not newer than what it shows.
                timestamp: Date().addingTimeInterval(-10)
            )
            _ = try await client.send(try APNSDevicePush(deviceToken: token, bundleID: app.bundleID, payload: payload))
        }
        return Set(emulator.activities(in: .sandbox).filter { $0.channelID == channelID }.map(\.id))
    }

    private func deleteAtAPNs(
        _ server: TestServer,
        app: TestApp,
        channelID: String,
        environment: APNSEnvironment
    ) async throws {
        let client = try await server.engine.clients.client(
            for: try await appRecord(server, app),
            environment: environment
        )
        try await client.deleteChannel(bundleID: app.bundleID, channelID: channelID)
    }
}
