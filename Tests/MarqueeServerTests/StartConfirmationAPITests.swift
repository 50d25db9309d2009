import Foundation
import MarqueeCore
import MarqueeEmulator
import MarqueeTesting
import Testing

@testable import MarqueeServer

/// The `confirm` policy over the API, with the emulator playing the app: connection resets leave
/// starts uncertain (some arrived, some not); the app of each uncertain device is asked, and what it
/// says decides: showing is confirmed and never sent again, absent gets the start once, no answer
/// stays uncertain and is reported. Under `skip` nothing is asked, and late joiners never reach a
/// device whose start ended uncertain.
@Suite("Start confirmation")
struct StartConfirmationAPITests {
    /// One stream per connection, so that a reset cuts off exactly the request it answers: the
    /// first 10 starts are reset before the emulator processes them (the device has nothing), the
    /// next 10 after (the device shows the activity, Marquee got no answer).
    static let settings = StartFanOutAPITests.patientRetries.merging([
        "apns.connections": "2",
        "apns.streamsPerConnection": "1",
        "jobs.pollMilliseconds": "100",
        "jobs.confirmation.graceSeconds": "1",
        "jobs.confirmation.windowSeconds": "20",
    ]) { _, new in new }

    /// The kick-off, its attributes naming the event as the app model reads it (`matchId`).
    nonisolated(unsafe) static let startBody: [String: Any] = {  // immutable; [String: Any] is JSON for the test client
        var body = StartFanOutAPITests.startBody
        body["attributes"] = ["homeTeam": "Arsenal", "awayTeam": "Chelsea", "matchId": "match"]
        return body
    }()

    static func injectResets(_ emulator: APNSEmulator) {
        emulator.injectFault(.init(.resetConnection, rate: .first(10), endpoints: [.devicePush]))
        emulator.injectFault(.init(.resetConnectionAfterProcessing, rate: .first(20), endpoints: [.devicePush]))
    }

    /// Registers the devices with Marquee, each with its app's device token, in this order (the
    /// order of the fan-out).
    static func register(_ devices: [EmulatedDevice], _ server: TestServer, _ app: TestApp) async throws {
        let tokens = devices.map { device -> [String: Any] in
            var item = LateJoinerAPITests.registration(device, tags: ["arsenal"], userID: nil)
            item["token"] = LateJoinerAPITests.token(device)
            item["deviceToken"] = device.deviceToken
            return item
        }
        let answer = try await server.client.send(
            "POST",
            "/v1/push-to-start-tokens/batch",
            key: app.appKey,
            json: ["tokens": tokens]
        )
        guard answer.status == 200 else {
            throw TestSetupError("registering answered \(answer.status): \(answer.text)")
        }
    }

    @Test(
        """
        after resets, uncertain devices whose app shows the activity are confirmed, those reporting absent get \
        one start, silent ones stay uncertain and are reported
        """,
        arguments: TestBackend.allCases
    )
    func confirm(backend: TestBackend) async throws {
        try await TestServer.run(backend, settings: Self.settings) { server in
            let emulator = try server.emulator
            let app = try await server.makeApp()
            #expect(try await server.putEvent(app, key: "match").status == 201)
            // 6 devices whose app is not played (registered before it is): they never report.
            let silent = try LateJoinerAPITests.makeDevices(6, emulator, app)
            let baseURL = try #require(URL(string: server.client.baseURL))
            emulator.connectApp(
                bundleID: app.bundleID,
                to: EmulatedAppMarquee(
                    baseURL: baseURL,
                    appKey: app.appKey,
                    attributesType: "MatchAttributes",
                    eventKeyAttribute: "matchId"
                )
            )
            let answering = try LateJoinerAPITests.makeDevices(34, emulator, app)
            #expect(
                answering.allSatisfy {
                    emulator.device(id: $0.id, in: .sandbox)?.appTraits?.answersBackgroundPush == true
                }
            )
            #expect(silent.allSatisfy { emulator.device(id: $0.id, in: .sandbox)?.appTraits == nil })
            try await Self.register(silent + answering, server, app)
            Self.injectResets(emulator)

            let started = try await server.client.send(
                "POST",
                "/v1/events/match/starts",
                key: app.publisherKey,
                json: Self.startBody
            )
            #expect(started.status == 202, "\(started.text)")
            let location = try #require(started.header("Location"))
            let job = try await StartFanOutAPITests.waitForJob(server, app, location)
            let diagnosis = { "job: \(job)\nwarnings:\n\(server.warnings.lines.joined(separator: "\n"))" }
            #expect(job["state"] as? String == "succeeded", "\(diagnosis())")
            #expect(StartFanOutAPITests.progress(job, "uncertain") == 20, "\(diagnosis())")
            try await LateJoinerAPITests.score(server, app, home: 1, away: 0)

            // The confirmation decides every uncertain device once the window (20 s from the ask) closes.
            let appID = try #require(PublicID.parseApp(app.id))
            let jobID = try #require(PublicID.parseJob(String(location.split(separator: "/").last ?? "")))
            try await waitUntil("the confirmation deciding every uncertain device", timeout: .seconds(120)) {
                let counts = try await server.store.confirmationCounts(appID: appID, jobID: jobID)
                return counts.watched == 20 && counts.waiting == 0
            }
            let counts = try await server.store.confirmationCounts(appID: appID, jobID: jobID)
            #expect(counts[.confirmed] > 0 && counts[.restarted] > 0 && counts[.uncertain] > 0, "\(counts)")
            #expect(counts[.confirmed] + counts[.restarted] + counts[.uncertain] == 20, "\(counts)")

            // Those reporting absent got the start once, through jobs that say "reason": "absent".
            let stored = try #require(try await server.store.event(appID: appID, externalKey: "match"))
            let absentJobs = try await server.store.jobs(appID: appID, kinds: [.startFanOut], before: nil, limit: 100)
                .filter { $0.arguments["reason"] == .string("absent") }
            #expect(!absentJobs.isEmpty)
            try await waitUntil("the absent devices' starts accepted") {
                var accepted: Int64 = 0
                for absentJob in absentJobs {
                    accepted += try await server.store.childJobs(appID: appID, parentID: absentJob.id).reduce(0) {
                        $0 + $1.progress.succeeded
                    }
                }
                return accepted == counts[.restarted]
            }

            // At the emulator: no device shows two activities; every device whose app answers shows
            // one, those started again with the score as it is now; the silent devices without one
            // are among the uncertain.
            let byDevice = Dictionary(grouping: emulator.activities(in: .sandbox), by: \.deviceID)
            let twice = byDevice.filter { $0.value.count > 1 }.keys.sorted()
            #expect(twice.isEmpty, "shown more than once: \(twice)\n\(diagnosis())")
            let restartedTokens = Set(
                absentJobs.flatMap { absentJob -> [String] in
                    guard case .array(let tokens)? = absentJob.arguments["audience"]?["tokens"] else { return [] }
                    return tokens.compactMap { if case .string(let token) = $0 { token } else { nil } }
                }
            )
            #expect(Int64(restartedTokens.count) == counts[.restarted])
            for device in answering {
                let shown = byDevice[device.id] ?? []
                #expect(shown.count == 1, "device \(device.id) shows \(shown.count)")
                if restartedTokens.contains(LateJoinerAPITests.token(device)) {
                    #expect(
                        shown.first?.contentState?["homeScore"] == .integer(1),
                        "device \(device.id): \(String(describing: shown.first?.contentState))"
                    )
                }
            }
            #expect(silent.allSatisfy { !restartedTokens.contains(LateJoinerAPITests.token($0)) })
            let silentWithout = silent.filter { byDevice[$0.id] == nil }.count
            #expect(Int64(silentWithout) <= counts[.uncertain])

            // Reported: the funnel's uncertain devices are those the confirmation left uncertain, and
            // the metrics count each outcome.
            let funnel = try await server.client.send("GET", "/v1/events/match/funnel", key: app.publisherKey)
            let sandbox = (funnel.json["environments"] as? [[String: Any]])?.first {
                $0["environment"] as? String == "sandbox"
            }
            #expect((sandbox?["uncertain"] as? Int).map(Int64.init) == counts[.uncertain], "\(funnel.text)")
            let shownJob = try await server.client.send("GET", location, key: app.publisherKey)
            let confirmation = shownJob.json["confirmation"] as? [String: Any]
            #expect(confirmation?["confirmed"] as? Int == Int(counts[.confirmed]), "\(shownJob.text)")
            #expect(confirmation?["restarted"] as? Int == Int(counts[.restarted]))
            #expect(confirmation?["uncertain"] as? Int == Int(counts[.uncertain]))
            #expect(confirmation?["waiting"] as? Int == 0)
            let metrics = try await server.scrapeMetrics()
            for outcome in [ConfirmationOutcome.confirmed, .restarted, .uncertain] {
                #expect(
                    metrics.value(
                        "marquee_start_confirmations_total",
                        ["app": app.bundleID, "outcome": outcome.rawValue]
                    ) == Double(counts[outcome]),
                    "\(outcome)"
                )
            }
            // The silent devices with a device token and no report were asked; so were the absent ones.
            let asked =
                metrics.value("marquee_start_confirmations_total", ["app": app.bundleID, "outcome": "asked"]) ?? 0
            #expect(asked >= Double(counts[.restarted] + counts[.uncertain]))
            #expect(
                try await server.store.pendingStartCount(appID: appID, eventID: stored.id, environment: .sandbox) == 0
            )
        }
    }

    @Test(
        """
        under skip nothing is asked, and a device whose start ended uncertain is no late joiner when it registers \
        again
        """,
        arguments: TestBackend.allCases
    )
    func skipAsksNothing(backend: TestBackend) async throws {
        try await TestServer.run(
            backend,
            settings: Self.settings.merging(["jobs.uncertainStarts": "skip"]) { _, new in new }
        ) { server in
            let emulator = try server.emulator
            let app = try await server.makeApp()
            #expect(try await server.putEvent(app, key: "match").status == 201)
            let devices = try LateJoinerAPITests.makeDevices(30, emulator, app)
            try await Self.register(devices, server, app)
            Self.injectResets(emulator)
            let started = try await server.client.send(
                "POST",
                "/v1/events/match/starts",
                key: app.publisherKey,
                json: Self.startBody
            )
            let location = try #require(started.header("Location"))
            let job = try await StartFanOutAPITests.waitForJob(server, app, location)
            #expect(StartFanOutAPITests.progress(job, "uncertain") == 20, "\(job)")
            let appID = try #require(PublicID.parseApp(app.id))
            #expect(try await server.store.jobs(appID: appID, kinds: [.confirmStarts], before: nil, limit: 10).isEmpty)
            #expect(job["confirmation"] == nil, "\(job)")
            let shown = emulator.activities(in: .sandbox).count

            // Every device registers again while the match is live (a refresh): the uncertain ones
            // are queued as late joiners by the registration hook, and the pump sends them nothing.
            try await Self.register(devices, server, app)
            let stored = try #require(try await server.store.event(appID: appID, externalKey: "match"))
            try await waitUntil("the late-join queue drained") {
                try await server.store.pendingStartCount(appID: appID, eventID: stored.id, environment: .sandbox) == 0
            }
            // They are late joiners as far as the registration hook knows (queued again here), and
            // the pump still sends them nothing.
            #expect(try await LateJoinerAPITests.queuedNow(devices, server, app) == 20)
            try await waitUntil("the late-join queue drained again") {
                try await server.store.pendingStartCount(appID: appID, eventID: stored.id, environment: .sandbox) == 0
            }
            let jobs =
                try await server.client.send("GET", "/v1/jobs?limit=100", key: app.publisherKey).json["jobs"]
                as? [[String: Any]] ?? []
            #expect(jobs.count == 1, "a late-join job was created: \(jobs)")
            #expect(emulator.activities(in: .sandbox).count == shown)
            let metrics = try await server.scrapeMetrics()
            #expect(
                metrics.value("marquee_start_confirmations_total", ["app": app.bundleID, "outcome": "asked"]) == nil
            )
        }
    }
}
