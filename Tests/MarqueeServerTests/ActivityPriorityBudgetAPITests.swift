import Foundation
import MarqueeCore
import MarqueeEmulator
import MarqueeTesting
import Testing

/// The hourly budget of priority-10 device pushes per activity on an update token, and the
/// frequent-pushes flag the app reports, over the API with the emulator.
@Suite("Activity priority budget")
struct ActivityPriorityBudgetAPITests {
    @Test(
        "past its hourly budget an activity on an update token gets its important updates at 5, and the job says so; frequent pushes get the larger budget",
        arguments: TestBackend.allCases
    )
    func budgetPerActivity(backend: TestBackend) async throws {
        let settings = ["broadcasts.activityPriorityBudgetPerHour": "2", "broadcasts.frequentActivityPriorityBudgetPerHour": "10"]
        try await TestServer.run(backend, settings: settings) { server in
            let emulator = try server.emulator
            let app = try await server.makeApp()
            #expect(try await server.putEvent(app, key: "match").status == 201)
            let devices = try await StartFanOutAPITests.devices(2, emulator: emulator, server: server, app: app)
            var body = StartFanOutAPITests.startBody
            body["inputPushToken"] = true
            let started = try await server.client.send("POST", "/v1/events/match/starts", key: app.publisherKey, json: body)
            _ = try await StartFanOutAPITests.waitForJob(server, app, try #require(started.header("Location")))

            // One app reports frequent pushes enabled with its update token, the other does not.
            let pushToStart = Dictionary(uniqueKeysWithValues: devices.map { ($0.id, $0.pushToStartTokens["MatchAttributes"] ?? "") })
            let reports = emulator.reportedUpdateTokens(in: .sandbox).sorted { $0.deviceID < $1.deviceID }
            #expect(reports.count == 2)
            let frequent = try #require(reports.first)
            let plain = try #require(reports.last)
            for report in reports {
                var json: [String: Any] = [
                    "eventKey": "match", "environment": "sandbox", "token": report.token,
                    "pushToStartToken": pushToStart[report.deviceID] ?? "",
                ]
                if report.deviceID == frequent.deviceID { json["frequentPushesEnabled"] = true }
                let answer = try await server.client.send("PUT", "/v1/activities/\(report.activityID)/update-token", key: app.appKey, json: json)
                #expect(answer.status == 200, "\(answer.text)")
                #expect(answer.json["frequentPushesEnabled"] as? Bool == (report.deviceID == frequent.deviceID))
            }

            var downgraded: [Int?] = []
            for goal in 1...3 {
                let answer = try await server.client.send(
                    "POST",
                    "/v1/events/match/broadcasts",
                    key: app.publisherKey,
                    json: ["event": "update", "contentState": LiveActivityLifecycleAPITests.score(goal, 0), "important": true]
                )
                #expect(answer.status == 200, "\(answer.text)")
                let result = try #require((answer.json["results"] as? [[String: Any]])?.first)
                let href = try #require((result["activityUpdates"] as? [String: Any])?["href"] as? String)
                let job = try await StartFanOutAPITests.waitForJob(server, app, href)
                #expect(job["state"] as? String == "succeeded")
                downgraded.append(StartFanOutAPITests.progress(job, "downgraded"))
            }
            #expect(downgraded == [0, 0, 1])
            let updates = { (token: String) in emulator.pushes(to: token, in: .sandbox).map(\.priority) }
            #expect(updates(plain.token) == [10, 10, 5])
            #expect(updates(frequent.token) == [10, 10, 10])
        }
    }
}
