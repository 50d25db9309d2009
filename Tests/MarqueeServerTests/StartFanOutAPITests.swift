import Crypto
import Foundation
import Logging
import MarqueeCore
import MarqueeEmulator
import MarqueeTesting
import Testing

/// Starting an event's Live Activity on an audience over the API, with the emulator's virtual
/// devices: every device shows it once, progress and server-sent events follow the job, a worker
/// stopped mid fan-out resumes without a second start, cancellation, and the 410 rule.
@Suite("Start fan-out")
struct StartFanOutAPITests {
    static let versions: [IOSVersion] = [IOSVersion(17, 2), IOSVersion(17, 4), IOSVersion(18, 0)]

    nonisolated(unsafe) static let startBody: [String: Any] = [  // immutable; [String: Any] is JSON for the test client
        "environment": "sandbox",
        "attributes": ["homeTeam": "Arsenal", "awayTeam": "Chelsea"],
        "contentState": ["homeScore": 0, "awayScore": 0],
        "alert": ["title": "Kick-off", "body": "Arsenal v Chelsea has started"],
    ]

    /// Registers `count` devices (versions in turn) with the emulator and their push-to-start
    /// tokens with Marquee.
    static func devices(
        _ count: Int,
        emulator: APNSEmulator,
        server: TestServer,
        app: TestApp
    ) async throws -> [EmulatedDevice] {
        var devices: [EmulatedDevice] = []
        for index in 0..<count {
            devices.append(
                try emulator.registerDevice(
                    environment: .sandbox,
                    bundleID: app.bundleID,
                    iOSVersion: versions[index % versions.count],
                    pushToStartAttributesTypes: ["MatchAttributes"]
                )
            )
        }
        let tokens = devices.map { device -> [String: Any] in
            [
                "token": device.pushToStartTokens["MatchAttributes"] ?? "",
                "environment": "sandbox",
                "attributesType": "MatchAttributes",
                "iosVersion": device.iOSVersion.description,
                "tags": ["arsenal"],
            ]
        }
        let registered = try await server.client.send(
            "POST",
            "/v1/push-to-start-tokens/batch",
            key: app.appKey,
            json: ["tokens": tokens]
        )
        guard registered.status == 200 else {
            throw TestSetupError("registering tokens answered \(registered.status): \(registered.text)")
        }
        return devices
    }

    /// Polls the job until `done` holds for it (300 s at most).
    @discardableResult
    static func waitForJob(
        _ server: TestServer,
        _ app: TestApp,
        _ location: String,
        until done: ([String: Any]) -> Bool = {
            ["succeeded", "failed", "cancelled"].contains($0["state"] as? String ?? "")
        }
    ) async throws -> [String: Any] {
        try await server.poll(location, key: app.publisherKey, "the job reaching its state", until: done)
    }

    static func progress(_ job: [String: Any], _ key: String) -> Int? {
        ((job["progress"] as? [String: Any])?[key] as? NSNumber)?.intValue
    }

    @Test(
        "1,000 devices on iOS 17.2, 17.4 and 18 each show the activity once; progress and events reach done",
        arguments: TestBackend.allCases
    )
    func thousandDevices(backend: TestBackend) async throws {
        try await TestServer.run(backend) { server in
            let emulator = try server.emulator
            let app = try await server.makeApp()
            #expect(try await server.putEvent(app, key: "match").status == 201)
            let channelID = try #require(
                try await server.client.send("GET", "/v1/events/match/channels/sandbox", key: app.appKey).json[
                    "channelID"
                ] as? String
            )
            let devices = try await Self.devices(1000, emulator: emulator, server: server, app: app)

            let started = try await server.client.send(
                "POST",
                "/v1/events/match/starts",
                key: app.publisherKey,
                json: Self.startBody
            )
            #expect(started.status == 202)
            let location = try #require(started.header("Location"))
            #expect(location.hasPrefix("/v1/jobs/job_"))
            #expect(Self.progress(started.json, "total") == 1000)

            let job = try await Self.waitForJob(server, app, location)
            #expect(job["state"] as? String == "succeeded")
            #expect(Self.progress(job, "sent") == 1000)
            #expect(Self.progress(job, "accepted") == 1000)
            #expect(Self.progress(job, "failed") == 0)
            #expect(Self.progress(job, "remaining") == 0)

            let activities = emulator.activities(in: .sandbox)
            // The server's warnings tell a repeated send's cause.
            #expect(
                activities.count == 1000,
                "job: \(job)\nwarnings:\n\(server.warnings.lines.joined(separator: "\n"))"
            )
            let byDevice = Dictionary(grouping: activities, by: \.deviceID)
            for device in devices {
                let shown = byDevice[device.id] ?? []
                #expect(shown.count == 1, "device \(device.id) shows \(shown.count) activities")
                guard let activity = shown.first else { continue }
                #expect(activity.contentState?["homeScore"] == .integer(0))
                if device.iOSVersion >= IOSVersion(18, 0) {
                    #expect(activity.channelID == channelID)
                } else {
                    #expect(activity.channelID == nil)
                    #expect(activity.updateToken != nil)
                }
            }

            // The stream of a finished job: its state, then done, and the end.
            let events = try await server.client.send(
                "GET",
                location + "/events",
                key: app.publisherKey,
                headers: ["Last-Event-ID": "7"]
            )
            #expect(events.status == 200)
            #expect(events.header("Content-Type")?.hasPrefix("text/event-stream") == true)
            #expect(events.text.contains("event: done"))
            #expect(events.text.contains("id: 8"))

            // A finished job cannot be cancelled, even in the moment after its last partition
            // finished and before that partition's worker wrote the fan-out's own row (a loaded CI
            // run saw the cancel succeed there and turn the finished job into a cancelled one). Any
            // other answer is shown with its problem and the server's warnings.
            let cancel = try await server.client.send("POST", location + "/cancel", key: app.publisherKey)
            #expect(
                cancel.status == 409,
                """
                \(cancel.status) \
                \(cancel.text.prefix(500))\nwarnings:\n\(server.warnings.lines.suffix(20).joined(separator: "\n"))
                """
            )

            let list = try await server.client.send("GET", "/v1/jobs?limit=1", key: app.publisherKey)
            #expect((list.json["jobs"] as? [[String: Any]])?.first?["id"] as? String == job["id"] as? String)

            // Starting again sends nothing: every token is in the event's start ledger.
            let again = try await server.client.send(
                "POST",
                "/v1/events/match/starts",
                key: app.publisherKey,
                json: Self.startBody
            )
            #expect(Self.progress(again.json, "total") == 0)
            let second = try await Self.waitForJob(server, app, try #require(again.header("Location")))
            #expect(second["state"] as? String == "succeeded")
            #expect(emulator.activities(in: .sandbox).count == 1000)
        }
    }

    @Test(
        "a fan-out through one connection of two streams still starts every device once",
        arguments: TestBackend.allCases
    )
    func narrowConnection(backend: TestBackend) async throws {
        try await TestServer.run(backend, settings: ["apns.connections": "1", "apns.streamsPerConnection": "2"]) {
            server in
            let emulator = try server.emulator
            let app = try await server.makeApp()
            #expect(try await server.putEvent(app, key: "match").status == 201)
            let devices = try await Self.devices(150, emulator: emulator, server: server, app: app)
            let started = try await server.client.send(
                "POST",
                "/v1/events/match/starts",
                key: app.publisherKey,
                json: Self.startBody
            )
            let job = try await Self.waitForJob(server, app, try #require(started.header("Location")))
            #expect(job["state"] as? String == "succeeded")
            #expect(Self.progress(job, "accepted") == devices.count)
            let activities = emulator.activities(in: .sandbox)
            #expect(Set(activities.map(\.deviceID)) == Set(devices.map(\.id)))
            #expect(activities.count == devices.count)
        }
    }

    /// Faults that let exactly `count` starts through and answer every later one "429, try
    /// later": a fan-out stands still in a known place until the test removes them.
    static func holdBack(after count: Int, _ emulator: APNSEmulator) {
        emulator.injectFault(.init(.respond(.tooManyRequests), rate: .afterFirst(count), endpoints: [.devicePush]))
    }

    /// Retries that go on as long as the test needs, never far apart.
    static let patientRetries = [
        "jobs.maxAttemptsPerToken": "1000",
        "jobs.retryBaseMilliseconds": "50",
        "jobs.retryMaxMilliseconds": "200",
    ]

    @Test(
        "a worker stopped in the middle of a fan-out and started again leaves every device started exactly once",
        arguments: TestBackend.allCases
    )
    func restartMidFanOut(backend: TestBackend) async throws {
        let emulator = APNSEmulator()
        try await emulator.start()
        defer { Task { await emulator.shutdown() } }
        let settings = Self.patientRetries.merging([
            "jobs.pageSize": "25",
            "jobs.batchSize": "20",
            "jobs.partitions": "4",
        ]) { _, new in new }.merging(try emulator.customTargetSettings()) { _, new in new }
        // Both servers' warnings (a failed commit, a lost lease), shown if a device is started twice.
        let warnings = FlightRecorder(capacity: 200)
        try await TestServer.withDatabase(backend) { database in
            let (app, location) = try await TestServer.run(
                on: database,
                settings: settings,
                logger: warnings.logger(level: .warning)
            ) { server in
                let app = try await server.makeApp()
                try emulator.register(app)
                #expect(try await server.putEvent(app, key: "match").status == 201)
                _ = try await Self.devices(600, emulator: emulator, server: server, app: app)
                Self.holdBack(after: 100, emulator)
                let started = try await server.client.send(
                    "POST",
                    "/v1/events/match/starts",
                    key: app.publisherKey,
                    json: Self.startBody
                )
                let location = try #require(started.header("Location"))
                let midway = try await Self.waitForJob(server, app, location) {
                    (Self.progress($0, "accepted") ?? 0) >= 100
                }
                #expect(midway["state"] as? String == "running")
                return (app, location)
            }
            // Stopped with 100 devices started and 500 waiting for a retry.
            #expect(emulator.activities(in: .sandbox).count == 100)

            emulator.removeAllFaults()
            let finished = try await TestServer.run(
                on: database,
                settings: settings,
                logger: warnings.logger(level: .warning)
            ) { server in
                let job = try await Self.waitForJob(server, app, location)
                #expect(job["state"] as? String == "succeeded")
                #expect(Self.progress(job, "accepted") == 600)
                return "\(job)"
            }
            let activities = emulator.activities(in: .sandbox)
            // The job's progress as the API showed it and the servers' warnings tell a repeated send's cause.
            #expect(activities.count == 600, "job: \(finished)\nwarnings:\n\(warnings.lines.joined(separator: "\n"))")
            let repeated = Dictionary(grouping: activities, by: \.deviceID).filter { $0.value.count > 1 }.keys.sorted()
            #expect(repeated.isEmpty, "started more than once: \(repeated)")
        }
    }

    @Test("a cancelled job stops sending and stays cancelled", arguments: TestBackend.allCases)
    func cancel(backend: TestBackend) async throws {
        let settings = Self.patientRetries.merging([
            "jobs.pageSize": "20", "jobs.batchSize": "10", "jobs.partitions": "3",
        ]) { _, new in new }
        try await TestServer.run(backend, settings: settings) { server in
            let emulator = try server.emulator
            let app = try await server.makeApp()
            #expect(try await server.putEvent(app, key: "match").status == 201)
            _ = try await Self.devices(300, emulator: emulator, server: server, app: app)
            Self.holdBack(after: 50, emulator)
            let started = try await server.client.send(
                "POST",
                "/v1/events/match/starts",
                key: app.publisherKey,
                json: Self.startBody
            )
            let location = try #require(started.header("Location"))
            try await Self.waitForJob(server, app, location) { (Self.progress($0, "accepted") ?? 0) >= 50 }

            let cancelled = try await server.client.send("POST", location + "/cancel", key: app.publisherKey)
            #expect(cancelled.status == 200)
            #expect(cancelled.json["state"] as? String == "cancelled")
            // Each partition notices before its next retry round and its run returns (its series of
            // remaining tokens goes with the last one), so its "try later" answers stop coming;
            // left running, they would go on for minutes (1,000 attempts each).
            let jobID = try #require(location.split(separator: "/").last.map(String.init))
            try await waitUntil("every part of the cancelled job to stop running") {
                try await server.scrapeMetrics().value("marquee_job_remaining_tokens", ["job": jobID]) == nil
            }
            // Pushes written before the runs stopped may still be on their way to the emulator (on a
            // loaded machine it answers them later): those were sent, not tried after. Once none is
            // in flight, a push the emulator sees is one sent after the runs stopped.
            try await waitUntil("the pushes written before the runs stopped to be answered") {
                (try await server.scrapeMetrics().value("marquee_apns_streams_in_flight", ["environment": "sandbox"])
                    ?? 0) == 0
            }
            let refused = emulator.counters.injectedFaults
            #expect(emulator.activities(in: .sandbox).count == 50)
            let job = try await server.client.send("GET", location, key: app.publisherKey).json
            #expect(job["state"] as? String == "cancelled")
            #expect(Self.progress(job, "accepted") == 50)
            // Cancelling again is harmless.
            let again = try await server.client.send("POST", location + "/cancel", key: app.publisherKey)
            #expect(again.status == 200)
            #expect(again.json["state"] as? String == "cancelled")
            #expect(emulator.counters.injectedFaults == refused, "no push was tried after the runs stopped")
        }
    }

    @Test("a 410 retires a token only if APNs saw it dead after its last registration", arguments: TestBackend.allCases)
    func goneTokens(backend: TestBackend) async throws {
        try await TestServer.run(backend) { server in
            let emulator = try server.emulator
            let app = try await server.makeApp()
            #expect(try await server.putEvent(app, key: "match").status == 201)
            let devices = try await Self.devices(3, emulator: emulator, server: server, app: app)
            // Device 0 uninstalled after registering: dead. Device 1 uninstalled, then its token
            // registered again (as a device restoring a backup would): APNs' verdict is older.
            try emulator.uninstallApp(environment: .sandbox, deviceID: devices[0].id)
            try emulator.uninstallApp(environment: .sandbox, deviceID: devices[1].id)
            try await Task.sleep(for: .milliseconds(20))
            let token1 = try #require(devices[1].pushToStartTokens["MatchAttributes"])
            #expect(
                try await server.client.send(
                    "PUT",
                    "/v1/push-to-start-tokens/\(token1)",
                    key: app.appKey,
                    json: ["environment": "sandbox", "attributesType": "MatchAttributes", "iosVersion": "17.4"]
                ).status == 200
            )

            let started = try await server.client.send(
                "POST",
                "/v1/events/match/starts",
                key: app.publisherKey,
                json: Self.startBody
            )
            let job = try await Self.waitForJob(server, app, try #require(started.header("Location")))
            #expect(job["state"] as? String == "succeeded")
            #expect(Self.progress(job, "accepted") == 1)
            #expect(Self.progress(job, "failed") == 2)
            #expect(Self.progress(job, "tokensRetired") == 1)
            let failures = (job["progress"] as? [String: Any])?["failures"] as? [[String: Any]] ?? []
            #expect(failures.count == 1)
            #expect(failures.first?["outcome"] as? String == "tokenInvalid")
            #expect(failures.first?["reason"] as? String == "Unregistered")

            let query = "?environment=sandbox&attributesType=MatchAttributes"
            let token0 = try #require(devices[0].pushToStartTokens["MatchAttributes"])
            #expect(
                try await server.client.send("GET", "/v1/push-to-start-tokens/\(token0)\(query)", key: app.appKey).json[
                    "valid"
                ] as? Bool == false
            )
            #expect(
                try await server.client.send("GET", "/v1/push-to-start-tokens/\(token1)\(query)", key: app.appKey).json[
                    "valid"
                ] as? Bool == true
            )
        }
    }
}
