import Foundation
import MarqueeCore
import MarqueeEmulator
import MarqueeEngine
import MarqueeTesting
import Testing

/// An event whose timeline runs by itself, over the API on both stores with an injected clock,
/// observed through the API and the emulator's devices: each step runs once, at its time.
@Suite("Event timeline API")
struct EventTimelineAPITests {
    static let settings = ["jobs.pollMilliseconds": "50"]
    /// Kick-off, three hours after the test clock starts.
    static let kickOff = ManualWallClock().now.addingTimeInterval(3 * 3600)

    static func eventBody(kickOff: Date = kickOff, timeline: [String: Any]? = nil) -> [String: Any] {
        [
            "title": "Arsenal v Chelsea",
            "attributesType": "MatchAttributes",
            "environments": ["sandbox"],
            "storagePolicy": "mostRecentMessage",
            "plannedStart": rfc3339(kickOff),
            "plannedEnd": rfc3339(kickOff.addingTimeInterval(7200)),
            "timeline": timeline ?? [
                "automatic": true,
                "start": [
                    "attributes": ["homeTeam": "Arsenal", "awayTeam": "Chelsea"],
                    "contentState": ["homeScore": 0, "awayScore": 0],
                    "alert": ["title": "Kick-off", "body": "Arsenal v Chelsea has started"],
                    "audience": ["tags": ["arsenal"]],
                ],
            ],
        ]
    }

    /// The event's timeline steps by kind.
    static func steps(_ server: TestServer, _ app: TestApp) async throws -> [String: [String: Any]] {
        var steps: [String: [String: Any]] = [:]
        for schedule in try await server.schedules(of: "match", app) where schedule["origin"] as? String == "timeline" {
            steps[schedule["kind"] as? String ?? ""] = schedule
        }
        return steps
    }

    static func location(_ step: [String: Any]?) throws -> String {
        "/v1/schedules/\(try #require(step?["id"] as? String))"
    }

    @Test(
        """
        channels at the lead time, the start at kick-off, the end before 8 hours, the channels deleted 4 hours \
        later: each once
        """,
        arguments: TestBackend.allCases
    )
    func wholeTimeline(backend: TestBackend) async throws {
        let clock = ManualWallClock()
        let kickOff = Self.kickOff
        try await TestServer.run(backend, settings: Self.settings, clock: clock) { server in
            let emulator = try server.emulator
            let app = try await server.makeApp()
            let put = try await server.client.send(
                "PUT",
                "/v1/events/match",
                key: app.publisherKey,
                json: Self.eventBody()
            )
            #expect(put.status == 201, "\(put.text)")
            // Channels wait for the lead time; the answer says which durations apply.
            #expect((put.json["channels"] as? [Any])?.isEmpty == true)
            let timeline = try #require(put.json["timeline"] as? [String: Any])
            #expect(timeline["channelLeadSeconds"] as? Int == 3600)
            #expect(timeline["endAfterSeconds"] as? Int == 8 * 3600 - 900)
            #expect(timeline["deleteChannelsAfterSeconds"] as? Int == 4 * 3600)
            #expect(emulator.channels(in: .sandbox).isEmpty)

            var steps = try await Self.steps(server, app)
            #expect(steps.count == 4)
            #expect(steps["channels"]?["at"] as? String == rfc3339(kickOff.addingTimeInterval(-3600)))
            #expect(steps["start"]?["at"] as? String == rfc3339(kickOff))
            #expect(steps["end"]?["at"] as? String == rfc3339(kickOff.addingTimeInterval(27_900)))
            #expect(steps["close"]?["at"] as? String == rfc3339(kickOff.addingTimeInterval(27_900 + 14_400)))
            #expect(steps.values.allSatisfy { $0["state"] as? String == "pending" })
            let devices = try await server.registerDevices(3, app: app, emulator: emulator)

            // An hour before kick-off: the channel.
            server.advance(clock, to: kickOff.addingTimeInterval(-3600))
            let channels = try await server.waitForSchedule(try Self.location(steps["channels"]), app)
            #expect(channels["state"] as? String == "succeeded")
            let channelID = try #require(emulator.channels(in: .sandbox).first?.id)
            #expect(emulator.channels(in: .sandbox).count == 1)
            let read = try await server.client.send("GET", "/v1/events/match/channels/sandbox", key: app.appKey)
            #expect(read.json["channelID"] as? String == channelID)
            // An app that subscribes ahead of the start learns how long the channel will exist: until
            // the timeline's close, 4 h after the planned end.
            #expect(read.json["expiresAt"] as? String == rfc3339(kickOff.addingTimeInterval(27_900 + 14_400)))
            #expect(read.json["createdAt"] as? String == rfc3339(kickOff.addingTimeInterval(-3600)))
            #expect(emulator.activities(in: .sandbox).isEmpty)

            // Kick-off: every device shows the activity, on the channel.
            server.advance(clock, to: kickOff)
            let start = try await server.waitForSchedule(try Self.location(steps["start"]), app)
            #expect(start["state"] as? String == "succeeded")
            let jobID = try #require(((start["outcome"] as? [String: Any])?["jobs"] as? [String])?.first)
            try await server.waitFor("/v1/jobs/\(jobID)", key: app.publisherKey, "the start job") {
                $0["state"] as? String == "succeeded"
            }
            let started = emulator.activities(in: .sandbox)
            #expect(started.count == 3)
            #expect(started.allSatisfy { $0.channelID == channelID && $0.phase == .active })

            // The producer's last update before the automatic end.
            server.advance(clock, to: kickOff.addingTimeInterval(5400))
            let update = try await server.client.send(
                "POST",
                "/v1/events/match/broadcasts",
                key: app.publisherKey,
                json: ["event": "update", "contentState": ["homeScore": 2, "awayScore": 1]]
            )
            #expect(update.status == 200, "\(update.text)")

            // Nobody sent the end: it goes 7 h 45 after the start (which went out at kick-off).
            steps = try await Self.steps(server, app)
            #expect(steps["end"]?["at"] as? String == rfc3339(kickOff.addingTimeInterval(27_900)))
            server.advance(clock, to: kickOff.addingTimeInterval(27_900))
            let end = try await server.waitForSchedule(try Self.location(steps["end"]), app)
            #expect(end["state"] as? String == "succeeded")
            let ended = emulator.activities(in: .sandbox)
            #expect(ended.count == 3)
            for activity in ended {
                #expect(
                    activity.endedAt == kickOff.addingTimeInterval(27_900),
                    "ended by the push, before the system's 8 hours"
                )
                #expect(activity.contentState?["homeScore"] == .integer(2))
                #expect(activity.phase == .dismissed)
            }

            // Four hours after the end: the event is closed and its channel deleted.
            server.advance(clock, to: kickOff.addingTimeInterval(27_900 + 14_400))
            let close = try await server.waitForSchedule(try Self.location(steps["close"]), app)
            #expect(close["state"] as? String == "succeeded")
            #expect(emulator.channels(in: .sandbox).first?.isDeleted == true)
            let event = try await server.client.send("GET", "/v1/events/match", key: app.publisherKey)
            #expect(event.json["state"] as? String == "ended")

            // Each step once: one attempt each, one channel, one start per device, one update and one end.
            steps = try await Self.steps(server, app)
            #expect(steps.values.allSatisfy { $0["state"] as? String == "succeeded" && $0["attempts"] as? Int == 1 })
            #expect(emulator.channels(in: .sandbox).count == 1)
            for device in devices {
                #expect(
                    emulator.pushes(to: try #require(device.pushToStartTokens["MatchAttributes"]), in: .sandbox).count
                        == 1
                )
            }
            let broadcasts = emulator.pushes(to: channelID, in: .sandbox).filter { $0.endpoint == .broadcast }
            #expect(broadcasts.count == 2)
            #expect(broadcasts.last?.payload.contains("\"event\":\"end\"") == true)
        }
    }

    @Test(
        "an end the producer sent makes the automatic one skipped, and the channels go 4 hours after theirs",
        arguments: TestBackend.allCases
    )
    func producersEnd(backend: TestBackend) async throws {
        let clock = ManualWallClock()
        let kickOff = Self.kickOff
        try await TestServer.run(backend, settings: Self.settings, clock: clock) { server in
            let emulator = try server.emulator
            let app = try await server.makeApp()
            #expect(
                try await server.client.send("PUT", "/v1/events/match", key: app.publisherKey, json: Self.eventBody())
                    .status == 201
            )
            _ = try await server.registerDevices(2, app: app, emulator: emulator)
            let steps = try await Self.steps(server, app)
            server.advance(clock, to: kickOff)
            try await server.waitForSchedule(try Self.location(steps["start"]), app)
            try await server.waitFor("/v1/events/match/channels/sandbox", key: app.appKey, "the channel") {
                $0["channelID"] != nil
            }

            let fullTime = kickOff.addingTimeInterval(6300)
            server.advance(clock, to: fullTime)
            let end = try await server.client.send(
                "POST",
                "/v1/events/match/broadcasts",
                key: app.publisherKey,
                json: ["event": "end", "contentState": ["homeScore": 3, "awayScore": 1]]
            )
            #expect(end.status == 200, "\(end.text)")
            let after = try await Self.steps(server, app)
            // What the broadcast answered and the server's warnings tell why a replan did not happen.
            #expect(
                after["end"]?["state"] as? String == "skipped",
                "broadcast: \(end.text)\nsteps: \(after)\nwarnings: \(server.warnings.lines)"
            )
            #expect(
                ((after["end"]?["outcome"] as? [String: Any])?["skipped"] as? String)?.contains("already sent") == true
            )
            #expect(after["close"]?["at"] as? String == rfc3339(fullTime.addingTimeInterval(14_400)))

            server.advance(clock, to: fullTime.addingTimeInterval(14_400))
            try await server.waitForSchedule(try Self.location(after["close"]), app)
            let channelID = try #require(emulator.channels(in: .sandbox).first?.id)
            #expect(emulator.channels(in: .sandbox).first?.isDeleted == true)
            // Only the producer's end reached the channel.
            #expect(emulator.pushes(to: channelID, in: .sandbox).filter { $0.endpoint == .broadcast }.count == 1)
        }
    }

    @Test(
        "a new planned start moves the steps not yet done; closing the event cancels them",
        arguments: TestBackend.allCases
    )
    func rescheduleAndClose(backend: TestBackend) async throws {
        let clock = ManualWallClock()
        let kickOff = Self.kickOff
        try await TestServer.run(backend, settings: Self.settings, clock: clock) { server in
            let emulator = try server.emulator
            let app = try await server.makeApp()
            #expect(
                try await server.client.send("PUT", "/v1/events/match", key: app.publisherKey, json: Self.eventBody())
                    .status == 201
            )
            let before = try await Self.steps(server, app)

            // Postponed by half an hour, before anything ran: every step moves, none is added.
            let postponed = kickOff.addingTimeInterval(1800)
            let put = try await server.client.send(
                "PUT",
                "/v1/events/match",
                key: app.publisherKey,
                json: Self.eventBody(kickOff: postponed)
            )
            #expect(put.status == 200, "\(put.text)")
            var steps = try await Self.steps(server, app)
            #expect(
                Set(steps.values.compactMap { $0["id"] as? String })
                    == Set(before.values.compactMap { $0["id"] as? String })
            )
            #expect(steps["channels"]?["at"] as? String == rfc3339(postponed.addingTimeInterval(-3600)))
            #expect(steps["start"]?["at"] as? String == rfc3339(postponed))

            // The old lead time passes: nothing happens.
            server.advance(clock, to: kickOff.addingTimeInterval(-3600))
            // The new one: the channel, once.
            server.advance(clock, to: postponed.addingTimeInterval(-3600))
            try await server.waitForSchedule(try Self.location(steps["channels"]), app)
            #expect(emulator.channels(in: .sandbox).count == 1)

            // A timeline step is the timeline's: it is stopped by turning the timeline off, not one by one.
            let refused = try await server.client.send(
                "DELETE",
                try Self.location(steps["start"]),
                key: app.publisherKey
            )
            #expect(refused.status == 409)

            let closed = try await server.client.send("POST", "/v1/events/match/close", key: app.publisherKey)
            #expect(closed.status == 200)
            steps = try await Self.steps(server, app)
            #expect(steps["channels"]?["state"] as? String == "succeeded")
            for kind in ["start", "end", "close"] {
                #expect(steps[kind]?["state"] as? String == "cancelled", "\(kind)")
            }
            server.advance(clock, to: postponed.addingTimeInterval(86_400))
            try await Task.sleep(for: .milliseconds(300))
            #expect(emulator.activities(in: .sandbox).isEmpty)
            #expect(try await Self.steps(server, app)["start"]?["state"] as? String == "cancelled")
        }
    }

    @Test("a timeline that cannot work is refused at PUT", arguments: [TestBackend.sqlite])
    func refusedTimelines(backend: TestBackend) async throws {
        try await TestServer.run(backend, settings: Self.settings, clock: ManualWallClock()) { server in
            let app = try await server.makeApp()
            func put(_ timeline: [String: Any]) async throws -> [String] {
                let answer = try await server.client.send(
                    "PUT",
                    "/v1/events/match",
                    key: app.publisherKey,
                    json: Self.eventBody(timeline: timeline)
                )
                #expect(answer.status == 422, "\(answer.text)")
                return (answer.json["errors"] as? [[String: Any]] ?? []).compactMap { $0["pointer"] as? String }
            }
            #expect(try await put(["automatic": true]) == ["/timeline/start"])
            #expect(try await put(["automatic": false, "endAfterSeconds": 9 * 3600]) == ["/timeline/endAfterSeconds"])
            let noAlert: [String: Any] = [
                "automatic": true, "start": ["attributes": [:], "contentState": [:], "alert": [:]],
            ]
            #expect(try await put(noAlert) == ["/timeline/start/alert"])
            let production: [String: Any] = [
                "automatic": true,
                "start": [
                    "environment": "production", "attributes": [:], "contentState": [:],
                    "alert": ["title": "t", "body": "b"],
                ],
            ]
            #expect(try await put(production) == ["/timeline/start/environment"])
            #expect(try await server.client.send("GET", "/v1/events/match", key: app.publisherKey).status == 404)
        }
    }
}
