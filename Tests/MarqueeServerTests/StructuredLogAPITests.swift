import Foundation
import Logging
import MarqueeEmulator
import MarqueeServer
import MarqueeTesting
import Testing

/// The service's own log in JSON: request lines carry `request.id` (the `X-Request-ID` the answer
/// had), a fan-out's lines `job.id`, and no line holds a key or a whole push token.
@Suite("Structured logs")
struct StructuredLogAPITests {
    @Test("request lines carry request.id, job lines job.id; no API key or push token is logged")
    func requestAndJobIDs() async throws {
        let captured = CapturedLines()
        var logger = Logger(label: "marquee") {
            JSONLogHandler(label: $0, output: captured.output, metadataProvider: nil)
        }
        logger.logLevel = .debug
        let (app, requestID, location, tokens) = try await TestServer.run(.sqlite, logger: logger) { server in
            let emulator = try server.emulator
            let app = try await server.makeApp()
            let put = try await server.client.send(
                "PUT",
                "/v1/events/logged-match",
                key: app.publisherKey,
                json: [
                    "title": "Logged", "attributesType": "MatchAttributes", "environments": ["sandbox"],
                    "plannedStart": "2026-11-28T15:00:00Z", "plannedEnd": "2026-11-28T17:00:00Z",
                ],
                headers: ["X-Request-ID": "test-request-4711"]
            )
            #expect(put.status == 201)
            let devices = try await StartFanOutAPITests.devices(5, emulator: emulator, server: server, app: app)
            let started = try await server.client.send(
                "POST",
                "/v1/events/logged-match/starts",
                key: app.publisherKey,
                json: StartFanOutAPITests.startBody
            )
            let location = try #require(started.header("Location"))
            let job = try await StartFanOutAPITests.waitForJob(server, app, location)
            #expect(job["state"] as? String == "succeeded")
            return (
                app, put.header("X-Request-ID"), location,
                devices.compactMap { $0.pushToStartTokens["MatchAttributes"] }
            )
        }
        #expect(requestID == "test-request-4711")
        let lines = try captured.objects()
        #expect(!lines.isEmpty)
        for line in lines {
            for field in ["timestamp", "level", "label", "message"] {
                #expect(line[field] is String, "a line without \(field): \(line)")
            }
        }
        #expect(
            lines.contains { $0["request.id"] as? String == "test-request-4711" },
            "no line of the request carries its ID"
        )
        // Every line of a request carries one; the job's lines carry the job's ID exactly as the
        // API printed it (searching the log for `job_…` finds them), its partition's lines their
        // own and their parent's.
        #expect(lines.filter { $0["message"] as? String == "request" }.allSatisfy { $0["request.id"] is String })
        let completed = lines.filter { $0["message"] as? String == "fan-out completed" }
        #expect(!completed.isEmpty)
        #expect(
            completed.allSatisfy {
                ($0["job.id"] as? String)?.hasPrefix("job_") == true && $0["job.parent_id"] is String
            }
        )
        let jobID = try #require(location.split(separator: "/").last.map(String.init))
        #expect(completed.contains { $0["job.parent_id"] as? String == jobID }, "no line names \(jobID)")
        let jobLines = lines.filter { $0["job.id"] != nil }
        #expect(
            jobLines.allSatisfy { ($0["job.id"] as? String)?.hasPrefix("job_") == true },
            "a line names a job otherwise than the API"
        )

        let text = captured.all.joined()
        for secret in [app.adminKey, app.publisherKey, app.appKey] + tokens {
            #expect(!text.contains(secret), "the log shows a key or a whole push token")
        }
    }
}
