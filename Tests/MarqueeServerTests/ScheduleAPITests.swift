import Crypto
import Foundation
import MarqueeCore
import MarqueeEmulator
import MarqueeEngine
import MarqueeTesting
import Testing

/// Starts, broadcasts and ends scheduled for a time, over the API on both stores with an injected
/// clock: each fires once at its time as the immediate call would, a cancelled one never fires,
/// one fires once across a restart and a worker's takeover, and a bad one is refused when made.
@Suite("Schedules API")
struct ScheduleAPITests {
    static let settings = ["jobs.pollMilliseconds": "50"]

    nonisolated(unsafe) static let startBody: [String: Any] = [  // immutable; [String: Any] is JSON for the test client
        "environment": "sandbox",
        "attributes": ["homeTeam": "Arsenal", "awayTeam": "Chelsea"],
        "contentState": ["homeScore": 0, "awayScore": 0],
        "alert": ["title": "Kick-off", "body": "Arsenal v Chelsea has started"],
    ]

    @Test(
        "a scheduled start, update and end each run once at their time, as the immediate calls would",
        arguments: TestBackend.allCases
    )
    func startUpdateEnd(backend: TestBackend) async throws {
        let clock = ManualWallClock()
        try await TestServer.run(backend, settings: Self.settings, clock: clock) { server in
            let emulator = try server.emulator
            let app = try await server.makeApp()
            #expect(try await server.putEvent(app, key: "match").status == 201)
            let channelID = try #require(emulator.channels(in: .sandbox).first?.id)
            let devices = try await server.registerDevices(3, app: app, emulator: emulator)
            let t0 = clock.now

            var start = Self.startBody
            start["at"] = rfc3339(t0.addingTimeInterval(600))
            let scheduledStart = try await server.client.send(
                "POST",
                "/v1/events/match/starts",
                key: app.publisherKey,
                json: start
            )
            #expect(scheduledStart.status == 202, "\(scheduledStart.text)")
            let startLocation = try #require(scheduledStart.header("Location"))
            #expect(startLocation.hasPrefix("/v1/schedules/sch_"))
            #expect(scheduledStart.json["kind"] as? String == "start")
            #expect(scheduledStart.json["origin"] as? String == "api")
            #expect(scheduledStart.json["state"] as? String == "pending")
            #expect((scheduledStart.json["start"] as? [String: Any])?["environment"] as? String == "sandbox")

            let update = try await server.client.send(
                "POST",
                "/v1/events/match/broadcasts",
                key: app.publisherKey,
                json: [
                    "event": "update", "contentState": ["homeScore": 1, "awayScore": 0],
                    "at": rfc3339(t0.addingTimeInterval(1200)),
                ]
            )
            #expect(update.status == 202, "\(update.text)")
            #expect(update.json["kind"] as? String == "broadcast")
            let end = try await server.client.send(
                "POST",
                "/v1/events/match/broadcasts",
                key: app.publisherKey,
                json: [
                    "event": "end", "contentState": ["homeScore": 2, "awayScore": 0],
                    "at": rfc3339(t0.addingTimeInterval(1800)),
                ]
            )
            #expect(end.status == 202, "\(end.text)")
            #expect(end.json["kind"] as? String == "end")
            let listed = try await server.schedules(of: "match", app)
            #expect(listed.compactMap { $0["kind"] as? String } == ["start", "broadcast", "end"])

            // Nothing before its time.
            server.engine.wakeup.signal()
            #expect(emulator.activities(in: .sandbox).isEmpty)

            server.advance(clock, to: t0.addingTimeInterval(600))
            let started = try await server.waitForSchedule(startLocation, app)
            #expect(started["state"] as? String == "succeeded")
            #expect(started["attempts"] as? Int == 1)
            let jobID = try #require(((started["outcome"] as? [String: Any])?["jobs"] as? [String])?.first)
            let job = try await server.waitFor("/v1/jobs/\(jobID)", key: app.publisherKey, "the start job") {
                $0["state"] as? String == "succeeded"
            }
            #expect(StartFanOutAPITests.progress(job, "accepted") == 3)
            #expect(emulator.activities(in: .sandbox).count == 3)

            server.advance(clock, to: t0.addingTimeInterval(1200))
            let updated = try await server.waitForSchedule(try #require(update.header("Location")), app)
            #expect(updated["state"] as? String == "succeeded")
            let result = try #require(((updated["outcome"] as? [String: Any])?["broadcast"] as? [[String: Any]])?.first)
            #expect(result["status"] as? String == "accepted")
            #expect(result["channelID"] as? String == channelID)
            #expect(emulator.activities(in: .sandbox).allSatisfy { $0.contentState?["homeScore"] == .integer(1) })

            server.advance(clock, to: t0.addingTimeInterval(1800))
            #expect(
                try await server.waitForSchedule(try #require(end.header("Location")), app)["state"] as? String
                    == "succeeded"
            )
            let shown = emulator.activities(in: .sandbox)
            #expect(shown.count == devices.count)
            #expect(shown.allSatisfy { $0.endedAt != nil && $0.contentState?["homeScore"] == .integer(2) })

            // Once each: one start per device, one update and one end on the channel, whatever the
            // worker is woken for afterwards.
            server.advance(clock, to: t0.addingTimeInterval(3600))
            try await Task.sleep(for: .milliseconds(200))
            let sent = emulator.pushes(to: channelID, in: .sandbox).filter { $0.endpoint == .broadcast }
            #expect(sent.count == 2)
            let log = try await server.client.send(
                "GET",
                "/v1/events/match/channels/sandbox/broadcasts",
                key: app.publisherKey
            )
            let entries = log.json["broadcasts"] as? [[String: Any]] ?? []
            #expect(entries.compactMap { $0["event"] as? String } == ["end", "update"])
            #expect(entries.allSatisfy { ($0["scheduleID"] as? String)?.hasPrefix("sch_") == true })
            for device in devices {
                #expect(
                    emulator.pushes(to: try #require(device.pushToStartTokens["MatchAttributes"]), in: .sandbox).count
                        == 1
                )
            }
        }
    }

    @Test(
        "a cancelled schedule never fires; cancelling again answers it; one that ran cannot be cancelled",
        arguments: TestBackend.allCases
    )
    func cancelled(backend: TestBackend) async throws {
        let clock = ManualWallClock()
        try await TestServer.run(backend, settings: Self.settings, clock: clock) { server in
            let emulator = try server.emulator
            let app = try await server.makeApp()
            #expect(try await server.putEvent(app, key: "match").status == 201)
            let channelID = try #require(emulator.channels(in: .sandbox).first?.id)
            let t0 = clock.now
            func schedule(_ minute: Int, after seconds: TimeInterval) async throws -> String {
                let answer = try await server.client.send(
                    "POST",
                    "/v1/events/match/broadcasts",
                    key: app.publisherKey,
                    json: [
                        "event": "update", "contentState": ["minute": minute],
                        "at": rfc3339(t0.addingTimeInterval(seconds)),
                    ]
                )
                #expect(answer.status == 202, "\(answer.text)")
                return try #require(answer.header("Location"))
            }
            let cancelledOne = try await schedule(10, after: 60)
            let laterOne = try await schedule(20, after: 120)

            let cancel = try await server.client.send("DELETE", cancelledOne, key: app.publisherKey)
            #expect(cancel.status == 200)
            #expect(cancel.json["state"] as? String == "cancelled")
            #expect(
                try await server.client.send("DELETE", cancelledOne, key: app.publisherKey).json["state"] as? String
                    == "cancelled"
            )

            // Past both times: the later one runs; by then the cancelled one, due first, would have.
            server.advance(clock, to: t0.addingTimeInterval(180))
            #expect(try await server.waitForSchedule(laterOne, app)["state"] as? String == "succeeded")
            #expect(
                try await server.client.send("GET", cancelledOne, key: app.publisherKey).json["state"] as? String
                    == "cancelled"
            )
            let sent = emulator.pushes(to: channelID, in: .sandbox).filter { $0.endpoint == .broadcast }
            #expect(sent.count == 1)
            #expect(sent.first?.payload.contains("\"minute\":20") == true)

            let ran = try await server.client.send("DELETE", laterOne, key: app.publisherKey)
            #expect(ran.status == 409)
            #expect(ran.json["type"] as? String == "/problems/schedule-conflict")
            #expect(
                try await server.client.send(
                    "DELETE",
                    "/v1/schedules/sch_\(String(repeating: "0", count: 32))",
                    key: app.publisherKey
                ).status == 404
            )
            // A schedule's job is not one of the jobs API's.
            let listed =
                try await server.client.send("GET", "/v1/jobs", key: app.publisherKey).json["jobs"] as? [[String: Any]]
                ?? []
            #expect(listed.isEmpty)
        }
    }

    @Test("a bad schedule is refused when it is made, not when it is due", arguments: TestBackend.allCases)
    func refusedNow(backend: TestBackend) async throws {
        let clock = ManualWallClock()
        try await TestServer.run(backend, settings: Self.settings, clock: clock) { server in
            let app = try await server.makeApp()
            #expect(try await server.putEvent(app, key: "match").status == 201)
            let soon = rfc3339(clock.now.addingTimeInterval(3600))
            func post(_ path: String, _ body: [String: Any]) async throws -> TestHTTPClient.Response {
                try await server.client.send("POST", "/v1/events/\(path)", key: app.publisherKey, json: body)
            }
            func pointers(_ response: TestHTTPClient.Response) -> [String] {
                (response.json["errors"] as? [[String: Any]] ?? []).compactMap { $0["pointer"] as? String }
            }

            // In the past (beyond the tolerance): 422 on /at. A minute late is due at once.
            let past = try await post(
                "match/broadcasts",
                ["event": "update", "contentState": [:], "at": rfc3339(clock.now.addingTimeInterval(-120))]
            )
            #expect(past.status == 422)
            #expect(pointers(past) == ["/at"])
            let justNow = try await post(
                "match/broadcasts",
                ["event": "update", "contentState": [:], "at": rfc3339(clock.now.addingTimeInterval(-30))]
            )
            #expect(justNow.status == 202)

            // The immediate call's own checks.
            let dismissal = try await post(
                "match/broadcasts",
                ["event": "update", "contentState": [:], "dismissalDate": soon, "at": soon]
            )
            #expect(dismissal.status == 422)
            #expect(pointers(dismissal) == ["/dismissalDate"])
            var noAlert = Self.startBody
            noAlert["alert"] = [String: Any]()
            noAlert["at"] = soon
            let start = try await post("match/starts", noAlert)
            #expect(start.status == 422)
            #expect(pointers(start) == ["/alert"])
            var production = Self.startBody
            production["environment"] = "production"
            production["at"] = soon
            #expect(try await post("match/starts", production).status == 422)
            #expect(
                try await post("nope/broadcasts", ["event": "update", "contentState": [:], "at": soon]).status == 404
            )
            let huge = String(repeating: "x", count: 6000)
            let tooLarge = try await post(
                "match/broadcasts",
                ["event": "update", "contentState": ["text": huge], "at": soon]
            )
            #expect(tooLarge.status == 422)

            // A closed event takes no schedules.
            let closed = try await server.client.send("POST", "/v1/events/match/close", key: app.publisherKey)
            #expect(closed.status == 200, "\(closed.text)")
            #expect(
                try await post("match/broadcasts", ["event": "update", "contentState": [:], "at": soon]).status == 409
            )
            // Nothing refused was stored.
            #expect(try await server.schedules(of: "match", app).count == 1)
        }
    }

    @Test(
        """
        a scheduled broadcast fires once across a restart, and a worker taking over a run that logged its request \
        sends nothing again
        """,
        arguments: TestBackend.allCases
    )
    func acrossRestarts(backend: TestBackend) async throws {
        let clock = ManualWallClock()
        // The emulator outlives the servers (and runs on their clock).
        var emulatorConfiguration = APNSEmulatorConfiguration()
        emulatorConfiguration.clock = clock
        let emulator = APNSEmulator(configuration: emulatorConfiguration)
        try await emulator.start()
        defer { Task { await emulator.shutdown() } }
        let settings = Self.settings.merging([
            "jobs.leaseMilliseconds": "30000"
        ]) { _, new in new }.merging(try emulator.customTargetSettings()) { _, new in new }
        let t0 = clock.now
        try await TestServer.withDatabase(backend) { database in
            let (app, scheduled, takenOver, channel, logged) = try await TestServer.run(
                on: database,
                settings: settings,
                clock: clock
            ) { server in
                let app = try await server.makeApp()
                try emulator.register(app)
                #expect(try await server.putEvent(app, key: "match").status == 201)
                func schedule(_ minute: Int) async throws -> String {
                    let answer = try await server.client.send(
                        "POST",
                        "/v1/events/match/broadcasts",
                        key: app.publisherKey,
                        json: [
                            "event": "update", "contentState": ["minute": minute],
                            "at": rfc3339(t0.addingTimeInterval(3600)),
                        ]
                    )
                    #expect(answer.status == 202, "\(answer.text)")
                    return try #require(answer.header("Location"))
                }
                let scheduled = try await schedule(10)
                let takenOver = try await schedule(20)

                // Another replica, at their time, leased both, began the second and logged its
                // request before sending it, as a run does; APNs accepted it, and the replica died
                // before recording the schedule's outcome. (Done on the store at that time: this
                // server's clock has not got there, so its own worker leaves them alone.)
                let due = t0.addingTimeInterval(3600)
                let store = server.store
                let appID = try #require(try await store.apps().first { $0.bundleID == app.bundleID }?.id)
                let takenOverID = try #require(ScheduleID(uuidString: try Self.uuid(of: takenOver)))
                let leased = try await store.leaseJobs(
                    owner: "dead-replica",
                    kinds: [.schedule],
                    now: due,
                    leaseDuration: .seconds(30),
                    limit: 10
                )
                #expect(leased.count == 2)
                #expect(try await store.beginSchedule(appID: appID, id: takenOverID, now: due)?.state == .running)
                let event = try #require(try await store.event(appID: appID, externalKey: "match"))
                let channel = try #require(
                    try await store.liveChannel(appID: appID, eventID: event.id, environment: .sandbox)
                )
                let (logged, appended) = try await store.appendScheduledBroadcastLog(
                    BroadcastLogEntry(
                        appID: appID,
                        channelID: channel.id,
                        apnsRequestID: UUID(),
                        apnsUniqueID: nil,
                        priority: .normal,
                        timestamp: Int64(due.timeIntervalSince1970),
                        status: 0,
                        reason: nil,
                        latency: .zero,
                        sentAt: due,
                        contentState: ["minute": 20],
                        scheduleID: takenOverID
                    )
                )
                #expect(appended)
                try await store.completeBroadcastLog(
                    appID: appID,
                    sequence: try #require(logged.sequence),
                    status: 200,
                    reason: nil,
                    apnsUniqueID: nil,
                    latency: .milliseconds(2)
                )
                return (app, scheduled, takenOver, channel, logged)
            }
            // Down while both came due.
            clock.set(to: t0.addingTimeInterval(3600))

            let channelID = try #require(channel.apnsChannelID)
            try await TestServer.run(on: database, settings: settings, clock: clock) { server in
                // The dead replica's leases lapse.
                server.advance(clock, to: t0.addingTimeInterval(3600 + 31))
                let first = try await server.waitForSchedule(scheduled, app)
                #expect(first["state"] as? String == "succeeded")
                #expect(first["attempts"] as? Int == 1)
                let second = try await server.waitForSchedule(takenOver, app)
                #expect(second["state"] as? String == "succeeded")
                #expect(second["attempts"] as? Int == 2)
                let result = try #require(
                    ((second["outcome"] as? [String: Any])?["broadcast"] as? [[String: Any]])?.first
                )
                #expect(result["apnsRequestID"] as? String == logged.apnsRequestID.uuidString.lowercased())
            }
            // Only the first reached APNs; the second was sent by the replica that died (here: not
            // at all), and not again.
            let sent = emulator.pushes(to: channelID, in: .sandbox).filter { $0.endpoint == .broadcast }
            #expect(sent.count == 1)
            #expect(sent.first?.payload.contains("\"minute\":10") == true)

            // Another restart sends nothing more.
            try await TestServer.run(on: database, settings: settings, clock: clock) { server in
                server.advance(clock, to: t0.addingTimeInterval(7200))
                try await Task.sleep(for: .milliseconds(300))
                #expect(
                    try await server.schedules(of: "match", app).allSatisfy { $0["state"] as? String == "succeeded" }
                )
            }
            #expect(emulator.pushes(to: channelID, in: .sandbox).filter { $0.endpoint == .broadcast }.count == 1)
        }
    }

    /// The UUID of a `/v1/schedules/sch_<hex>` location.
    static func uuid(of location: String) throws -> String {
        let hex = Array(try #require(location.split(separator: "_").last))
        guard hex.count == 32 else { throw TestSetupError("not a schedule location: \(location)") }
        let text = String(hex)
        let parts = [
            text.prefix(8), text.dropFirst(8).prefix(4), text.dropFirst(12).prefix(4), text.dropFirst(16).prefix(4),
            text.dropFirst(20),
        ]
        return parts.joined(separator: "-")
    }
}
