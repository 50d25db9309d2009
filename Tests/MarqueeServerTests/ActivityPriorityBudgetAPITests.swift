import Foundation
import Logging
import MarqueeCore
import MarqueeEmulator
import MarqueeTesting
import Testing

/// The hourly budget of priority-10 device pushes per activity on an update token, and the
/// frequent-pushes flag the app reports, over the API with the emulator.
@Suite("Activity priority budget")
struct ActivityPriorityBudgetAPITests {
    @Test(
        """
        past its hourly budget an activity on an update token gets its important updates at 5, and the job says \
        so; frequent pushes get the larger budget
        """,
        arguments: TestBackend.allCases
    )
    func budgetPerActivity(backend: TestBackend) async throws {
        let settings = [
            "broadcasts.activityPriorityBudgetPerHour": "2", "broadcasts.frequentActivityPriorityBudgetPerHour": "10",
        ]
        // The server's warnings (a failed commit, a lost lease), shown if an update goes out twice.
        let warnings = FlightRecorder(capacity: 200)
        try await TestServer.run(backend, settings: settings, logger: warnings.logger(level: .warning)) { server in
            let emulator = try server.emulator
            let app = try await server.makeApp()
            #expect(try await server.putEvent(app, key: "match").status == 201)
            // The first device's app reports frequent pushes enabled with its update token, the
            // other's says nothing (its push-to-start token was registered without the flag).
            var first: String?
            let reports = try await LiveActivityLifecycleAPITests.startOnUpdateTokens(2, server: server, app: app) {
                report in
                if first == nil { first = report.deviceID }
                return report.deviceID == first ? ["frequentPushesEnabled": true] : [:]
            }
            #expect(reports.count == 2)
            let frequent = try #require(reports.first)
            let plain = try #require(reports.last)
            for report in reports {
                let activity = try await server.client.send(
                    "GET",
                    "/v1/activities/\(report.activityID)",
                    key: app.appKey
                )
                #expect(
                    activity.json["frequentPushesEnabled"] as? Bool == (report.deviceID == frequent.deviceID),
                    "\(activity.text)"
                )
            }

            var downgraded: [Int?] = []
            for goal in 1...3 {
                let answer = try await server.client.send(
                    "POST",
                    "/v1/events/match/broadcasts",
                    key: app.publisherKey,
                    json: [
                        "event": "update", "contentState": LiveActivityLifecycleAPITests.score(goal, 0),
                        "important": true,
                    ]
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
            #expect(updates(plain.token) == [10, 10, 5], "warnings:\n\(warnings.lines.joined(separator: "\n"))")
            #expect(updates(frequent.token) == [10, 10, 10])
        }
    }
}
