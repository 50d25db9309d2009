import Foundation
import MarqueeTesting
import Testing

/// What the web console stands on: its files served from the binary, and the small operations it
/// added to the public API (`GET /v1/me`, an audience's size, the broadcast log's content-states
/// and priority budget, the emulator's devices and Lock Screens). The console itself is tested in
/// a browser by scripts/console-test.
@Suite("Web console and its API")
struct ConsoleAPITests {
    @Test("the console's files: strict CSP, content types, a strong ETag and 304, 404 for others")
    func files() async throws {
        try await TestServer.run(.sqlite) { server in
            let index = try await server.client.send("GET", "/console")
            #expect(index.status == 200)
            #expect(index.header("Content-Type") == "text/html; charset=utf-8")
            let csp = try #require(index.header("Content-Security-Policy"))
            #expect(
                csp.contains("default-src 'self'") && csp.contains("script-src 'self'")
                    && csp.contains("style-src 'self'")
            )
            #expect(!csp.contains("unsafe-inline"))
            #expect(index.text.contains("/console/js/app.js"))
            let script = try await server.client.send("GET", "/console/js/app.js")
            #expect(script.header("Content-Type") == "text/javascript; charset=utf-8")
            let etag = try #require(script.header("ETag"))
            let again = try await server.client.send("GET", "/console/js/app.js", headers: ["If-None-Match": etag])
            #expect(again.status == 304 && again.body.isEmpty)
            #expect(
                try await server.client.send("GET", "/console/console.css").header("Content-Type")
                    == "text/css; charset=utf-8"
            )
            #expect(try await server.client.send("GET", "/console/nothing.js").status == 404)
        }
    }

    @Test("GET /v1/me: the key's role, app and whether APNs is an emulator", arguments: TestBackend.allCases)
    func caller(backend: TestBackend) async throws {
        try await TestServer.run(backend) { server in
            let app = try await server.makeApp("Scores")
            let deployment = try await server.client.send("GET", "/v1/me", key: server.deploymentKey)
            #expect(deployment.json["deploymentKey"] as? Bool == true)
            #expect(deployment.json["role"] as? String == "admin")
            #expect(deployment.json["app"] == nil)
            let publisher = try await server.client.send("GET", "/v1/me", key: app.publisherKey)
            #expect(publisher.json["role"] as? String == "publisher")
            #expect(publisher.json["emulator"] as? Bool == true)
            #expect((publisher.json["app"] as? [String: Any])?["id"] as? String == app.id)
            #expect(try await server.client.send("GET", "/v1/me", key: "mq_unknown_key").status == 401)
        }
    }

    @Test("an audience's size before a start, by tags, users or everyone", arguments: TestBackend.allCases)
    func audienceSize(backend: TestBackend) async throws {
        try await TestServer.run(backend) { server in
            let app = try await server.makeApp()
            _ = try await server.putEvent(app, key: "ars-che")
            let devices = try await server.client.send(
                "POST",
                "/v1/emulator/devices",
                key: app.appKey,
                json: ["environment": "sandbox", "count": 5, "attributesType": "MatchAttributes"]
            )
            #expect(devices.status == 201)
            let created = try #require(devices.json["devices"] as? [[String: Any]])
            #expect(created.count == 5)
            let tokens = created.enumerated().map { index, device -> [String: Any] in
                [
                    "token": device["pushToStartToken"] as? String ?? "", "environment": "sandbox",
                    "attributesType": "MatchAttributes",
                    "tags": [index < 3 ? "arsenal" : "chelsea"], "userID": "user-\(index)",
                ]
            }
            #expect(
                try await server.client.send(
                    "POST",
                    "/v1/push-to-start-tokens/batch",
                    key: app.appKey,
                    json: ["tokens": tokens]
                ).status == 200
            )
            func size(_ audience: [String: Any]?) async throws -> Int? {
                var body: [String: Any] = ["environment": "sandbox"]
                body["audience"] = audience
                let answer = try await server.client.send(
                    "POST",
                    "/v1/events/ars-che/audience",
                    key: app.publisherKey,
                    json: body
                )
                #expect(answer.status == 200, "\(answer.text)")
                return answer.json["count"] as? Int
            }
            #expect(try await size(nil) == 5)
            #expect(try await size(["tags": ["arsenal"]]) == 3)
            #expect(try await size(["userIDs": ["user-4", "user-9"]]) == 1)
            #expect(
                try await server.client.send(
                    "POST",
                    "/v1/events/ars-che/audience",
                    key: app.appKey,
                    json: ["environment": "sandbox"]
                ).status == 403
            )
            #expect(
                try await server.client.send(
                    "POST",
                    "/v1/events/nothing/audience",
                    key: app.publisherKey,
                    json: ["environment": "sandbox"]
                ).status == 404
            )
        }
    }

    @Test("the emulator's Lock Screens, drawn as the demo draws them, each app seeing its own devices")
    func lockScreens() async throws {
        try await TestServer.run(.sqlite) { server in
            let app = try await server.makeApp("Scores")
            let other = try await server.makeApp("Other")
            _ = try await server.putEvent(app, key: "ars-che")
            let created = try await server.client.send(
                "POST",
                "/v1/emulator/devices",
                key: app.publisherKey,
                json: ["environment": "sandbox", "count": 2, "iosVersion": "18.0", "attributesType": "MatchAttributes"]
            )
            let tokens = (created.json["devices"] as? [[String: Any]] ?? []).map {
                [
                    "token": $0["pushToStartToken"] as? String ?? "", "environment": "sandbox",
                    "attributesType": "MatchAttributes",
                ]
            }
            _ = try await server.client.send(
                "POST",
                "/v1/push-to-start-tokens/batch",
                key: app.appKey,
                json: ["tokens": tokens]
            )
            let before = try await server.client.send(
                "GET",
                "/v1/emulator/lock-screens?environment=sandbox",
                key: app.appKey
            )
            #expect(before.json["total"] as? Int == 2)
            #expect((before.json["devices"] as? [[String: Any]])?.allSatisfy { $0["lines"] == nil } == true)
            let start = try await server.client.send(
                "POST",
                "/v1/events/ars-che/starts",
                key: app.publisherKey,
                json: [
                    "environment": "sandbox",
                    "attributes": ["competition": "Premier League", "homeTeam": "Arsenal", "awayTeam": "Chelsea"],
                    "contentState": [
                        "homeScore": 1, "awayScore": 0, "period": "1st half", "clock": "12'",
                        "lastEvent": "GOAL Saka 12'",
                    ],
                    "alert": ["title": "Kick-off", "body": "Arsenal v Chelsea"],
                ]
            )
            let jobID = try #require(start.json["id"] as? String)
            let job = try await StartFanOutAPITests.waitForJob(server, app, "/v1/jobs/\(jobID)")
            #expect(job["state"] as? String == "succeeded")
            let after = try await server.client.send(
                "GET",
                "/v1/emulator/lock-screens?environment=sandbox",
                key: app.appKey
            )
            let screens = try #require(after.json["devices"] as? [[String: Any]])
            #expect(screens.count == 2)
            for screen in screens {
                #expect(screen["status"] as? String == "LIVE")
                #expect(screen["score"] as? String == "1 - 0")
                #expect(screen["competition"] as? String == "Premier League")
                let alert = try #require(screen["alert"] as? [String: Any])
                #expect(alert["title"] as? String == "Kick-off" && alert["body"] as? String == "Arsenal v Chelsea")
                let lines = try #require(screen["lines"] as? [String])
                #expect(lines.contains { $0.contains("Arsenal") && $0.contains("1 - 0") && $0.contains("Chelsea") })
                #expect(lines.contains { $0.contains("GOAL Saka 12'") })
            }
            let others = try await server.client.send(
                "GET",
                "/v1/emulator/lock-screens?environment=sandbox",
                key: other.appKey
            )
            #expect(others.json["total"] as? Int == 0)
            let everyone = try await server.client.send(
                "GET",
                "/v1/emulator/lock-screens?environment=sandbox",
                key: server.deploymentKey
            )
            #expect(everyone.json["total"] as? Int == 2)
        }
    }

    @Test(
        "the broadcast log carries each content-state and the channel's priority-10 budget left",
        arguments: TestBackend.allCases
    )
    func broadcastLogBudget(backend: TestBackend) async throws {
        try await TestServer.run(backend) { server in
            let app = try await server.makeApp()
            _ = try await server.putEvent(app, key: "ars-che")
            let sent = try await server.client.send(
                "POST",
                "/v1/events/ars-che/broadcasts",
                key: app.publisherKey,
                json: ["event": "update", "contentState": ["homeScore": 1, "awayScore": 0], "priority": 10]
            )
            #expect(sent.status == 200, "\(sent.text)")
            let log = try await server.client.send(
                "GET",
                "/v1/events/ars-che/channels/sandbox/broadcasts",
                key: app.publisherKey
            )
            let entry = try #require((log.json["broadcasts"] as? [[String: Any]])?.first)
            #expect((entry["contentState"] as? [String: Any])?["homeScore"] as? Int == 1)
            let budget = try #require(log.json["priorityBudget"] as? [String: Any])
            #expect(budget["usedLastHour"] as? Int == 1)
            #expect(budget["remaining"] as? Int == (budget["limitPerHour"] as? Int ?? 0) - 1)
        }
    }
}
