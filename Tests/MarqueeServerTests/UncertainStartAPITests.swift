import Foundation
import MarqueeCore
import MarqueeEmulator
import MarqueeTesting
import Testing

/// Starts that were written to APNs and got no answer, over the API with the emulator resetting
/// connections: the job names them (`progress.uncertain`, its events, the metrics), no device is
/// started twice, and `resend-uncertain` starts the rest once.
@Suite("Uncertain starts")
struct UncertainStartAPITests {
    /// One stream per connection: the request a reset cuts off is then the only one the connection
    /// carries, and the emulator drops it unprocessed, so that an uncertain start is one the device
    /// does not have. (With many streams per connection, answers the emulator had written but not
    /// yet flushed are lost with the connection too: those starts are uncertain and did arrive, and
    /// a resend shows them twice, as the runbook says.)
    static let settings = StartFanOutAPITests.patientRetries.merging([
        "apns.connections": "2",
        "apns.streamsPerConnection": "1",
        // `skip` as it was before `confirm` became the default (StartConfirmationAPITests).
        "jobs.uncertainStarts": "skip",
    ]) { _, new in new }

    @Test(
        """
        connections reset mid fan-out leave some starts uncertain: no device gets two, those without one are the \
        uncertain ones, and resend-uncertain starts them once
        """,
        arguments: TestBackend.allCases
    )
    func resetConnections(backend: TestBackend) async throws {
        try await TestServer.run(backend, settings: Self.settings) { server in
            let emulator = try server.emulator
            let app = try await server.makeApp()
            #expect(try await server.putEvent(app, key: "match").status == 201)
            let devices = try await StartFanOutAPITests.devices(300, emulator: emulator, server: server, app: app)
            emulator.injectFault(.init(.resetConnection, rate: .everyNth(25), endpoints: [.devicePush]))

            let started = try await server.client.send(
                "POST",
                "/v1/events/match/starts",
                key: app.publisherKey,
                json: StartFanOutAPITests.startBody
            )
            #expect(started.status == 202)
            let location = try #require(started.header("Location"))
            let job = try await StartFanOutAPITests.waitForJob(server, app, location)
            let diagnosis = "job: \(job)\nwarnings:\n\(server.warnings.lines.joined(separator: "\n"))"
            #expect(job["state"] as? String == "succeeded", "\(diagnosis)")
            let uncertain = try #require(StartFanOutAPITests.progress(job, "uncertain"))
            let accepted = try #require(StartFanOutAPITests.progress(job, "accepted"))
            #expect(uncertain > 0, "no start was uncertain: \(diagnosis)")
            #expect(StartFanOutAPITests.progress(job, "sent") == 300)
            #expect(StartFanOutAPITests.progress(job, "failed") == 0)
            #expect(accepted + uncertain == 300)
            // Uncertain tokens are not failures.
            #expect(((job["progress"] as? [String: Any])?["failures"] as? [Any])?.isEmpty == true)

            // At the emulator: no device started twice; those without a start are the uncertain ones.
            let first = Dictionary(grouping: emulator.activities(in: .sandbox), by: \.deviceID)
            let twice = first.filter { $0.value.count > 1 }.keys.sorted()
            #expect(twice.isEmpty, "started more than once: \(twice)\n\(diagnosis)")
            let without = devices.filter { first[$0.id] == nil }
            #expect(without.count <= uncertain)
            #expect(without.count == uncertain, "with one stream per connection an uncertain start never arrived")
            #expect(first.count == accepted)

            // The job's events, its view in the list and the metrics say so too.
            let events = try await server.client.send("GET", location + "/events", key: app.publisherKey)
            #expect(events.text.contains("event: done"))
            #expect(events.text.contains("\"uncertain\":\(uncertain)"), "\(events.text)")
            let list = try await server.client.send("GET", "/v1/jobs?limit=1", key: app.publisherKey)
            #expect(
                ((list.json["jobs"] as? [[String: Any]])?.first).flatMap {
                    StartFanOutAPITests.progress($0, "uncertain")
                } == uncertain
            )
            let metrics = try await server.scrapeMetrics()
            #expect(
                metrics.value("marquee_job_tokens_total", ["kind": "start", "outcome": "uncertain"])
                    == Double(uncertain)
            )
            #expect(
                metrics.value("marquee_job_tokens_total", ["kind": "start", "outcome": "accepted"]) == Double(accepted)
            )

            // The resend: a new start job to exactly the uncertain tokens, through the ledger.
            emulator.removeAllFaults()
            let resent = try await server.client.send(
                "POST",
                location + "/resend-uncertain",
                key: app.publisherKey,
                headers: ["Idempotency-Key": "resend-1"]
            )
            #expect(resent.status == 202, "\(resent.text)")
            let resendLocation = try #require(resent.header("Location"))
            #expect(resendLocation != location)
            #expect(resent.json["kind"] as? String == "activity.start")
            #expect(StartFanOutAPITests.progress(resent.json, "total") == uncertain)
            let resendJob = try await StartFanOutAPITests.waitForJob(server, app, resendLocation)
            #expect(resendJob["state"] as? String == "succeeded")
            #expect(StartFanOutAPITests.progress(resendJob, "accepted") == uncertain)
            #expect(StartFanOutAPITests.progress(resendJob, "uncertain") == 0)

            let after = Dictionary(grouping: emulator.activities(in: .sandbox), by: \.deviceID)
            #expect(Set(after.keys) == Set(devices.map(\.id)), "a device still has no start")
            let twiceAfter = after.filter { $0.value.count > 1 }.keys.sorted()
            #expect(twiceAfter.isEmpty, "started more than once: \(twiceAfter)")

            // Asking again answers the same job (one resend per job), and sends nothing.
            let again = try await server.client.send("POST", location + "/resend-uncertain", key: app.publisherKey)
            #expect(again.status == 202)
            #expect(again.header("Location") == resendLocation)
            #expect(emulator.activities(in: .sandbox).count == 300)
            // The resend left nothing uncertain: it has nothing to resend in turn.
            let nothing = try await server.client.send(
                "POST",
                resendLocation + "/resend-uncertain",
                key: app.publisherKey
            )
            #expect(nothing.status == 409)
            #expect(nothing.json["type"] as? String == "/problems/job-conflict")
        }
    }

    @Test(
        "resend-uncertain refuses a job that has not finished or has no uncertain tokens, with a problem saying why",
        arguments: TestBackend.allCases
    )
    func refusals(backend: TestBackend) async throws {
        try await TestServer.run(backend, settings: StartFanOutAPITests.patientRetries) { server in
            let emulator = try server.emulator
            let app = try await server.makeApp()
            #expect(try await server.putEvent(app, key: "match").status == 201)
            _ = try await StartFanOutAPITests.devices(5, emulator: emulator, server: server, app: app)
            // Every start is answered "later": the job keeps running.
            StartFanOutAPITests.holdBack(after: 0, emulator)
            let started = try await server.client.send(
                "POST",
                "/v1/events/match/starts",
                key: app.publisherKey,
                json: StartFanOutAPITests.startBody
            )
            let location = try #require(started.header("Location"))

            let running = try await server.client.send("POST", location + "/resend-uncertain", key: app.publisherKey)
            #expect(running.status == 409)
            #expect(running.header("Content-Type")?.hasPrefix("application/problem+json") == true)
            #expect(running.json["type"] as? String == "/problems/job-conflict")
            #expect((running.json["detail"] as? String)?.contains("once it has finished") == true, "\(running.text)")

            #expect(try await server.client.send("POST", location + "/cancel", key: app.publisherKey).status == 200)
            let answered = try await server.client.send("POST", location + "/resend-uncertain", key: app.publisherKey)
            #expect(answered.status == 409)
            #expect((answered.json["detail"] as? String)?.contains("no uncertain tokens") == true, "\(answered.text)")

            let unknown = try await server.client.send(
                "POST",
                "/v1/jobs/job_00000000000000000000000000000000/resend-uncertain",
                key: app.publisherKey
            )
            #expect(unknown.status == 404)
            // A key of the app's role `app` may not.
            #expect(try await server.client.send("POST", location + "/resend-uncertain", key: app.appKey).status == 403)
        }
    }
}
