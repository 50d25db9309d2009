import Foundation
import MarqueeCore
import MarqueeEmulator
import MarqueeTesting
import Testing

@testable import MarqueeServer

/// The delivery funnel over time over real HTTP, with the emulator: nothing before the first start,
/// then cumulative points whose last one is the funnel's totals; read as the funnel is.
@Suite("Delivery funnel over time (API)")
struct FunnelSeriesAPITests {
    static func series(_ server: TestServer, key: String) async throws -> TestHTTPClient.Response {
        try await server.client.send("GET", "/v1/events/match/funnel/series", key: key)
    }

    @Test(
        """
        12 devices start, 5 show it and 2 end it: the series' last point is the funnel, within 240 points; a \
        publisher reads it, not the app key or another app
        """,
        arguments: TestBackend.allCases
    )
    func seriesOfAMatch(backend: TestBackend) async throws {
        try await TestServer.run(backend) { server in
            let emulator = try server.emulator
            let app = try await server.makeApp()
            #expect(try await server.putEvent(app, key: "match").status == 201)
            let devices = try LateJoinerAPITests.makeDevices(12, emulator, app)
            let tokens = devices.map {
                DevicePresenceAPITests.registration($0, token: LateJoinerAPITests.token($0), deviceToken: nil)
            }
            let registered = try await server.client.send(
                "POST",
                "/v1/push-to-start-tokens/batch",
                key: app.appKey,
                json: ["tokens": tokens]
            )
            #expect(registered.status == 200, "\(registered.text)")

            // Before the first start: the event's environment, no points, no axis.
            let before = try await Self.series(server, key: app.publisherKey)
            #expect(before.status == 200, "\(before.text)")
            #expect(before.json["eventKey"] as? String == "match")
            #expect(before.json["from"] == nil && before.json["bucketSeconds"] == nil)
            let empty = before.json["environments"] as? [[String: Any]] ?? []
            #expect(empty.map { $0["environment"] as? String } == ["sandbox"])
            #expect((empty.first?["points"] as? [Any])?.isEmpty == true)

            try await LateJoinerAPITests.start(server, app, event: "match", LateJoinerAPITests.startBody())
            let activities = Dictionary(
                uniqueKeysWithValues: emulator.activities(in: .sandbox).map { ($0.deviceID, $0) }
            )
            for (index, device) in devices.prefix(7).enumerated() {
                let state = index < 5 ? "showing" : "ended"
                let report = ["environment": "sandbox", "state": state, "activityID": activities[device.id]?.id ?? ""]
                let answer = try await DevicePresenceAPITests.report(
                    server,
                    key: app.appKey,
                    token: LateJoinerAPITests.token(device),
                    report
                )
                #expect(answer.status == 200, "\(answer.text)")
            }

            let answer = try await Self.series(server, key: app.publisherKey)
            #expect(answer.status == 200, "\(answer.text)")
            let bucketSeconds = try #require(answer.json["bucketSeconds"] as? Int)
            #expect(bucketSeconds >= 1)
            let from = try #require((answer.json["from"] as? String).flatMap { try? Date($0, strategy: .iso8601) })
            let until = try #require((answer.json["until"] as? String).flatMap { try? Date($0, strategy: .iso8601) })
            #expect(from <= until)
            let sandbox = try #require((answer.json["environments"] as? [[String: Any]])?.first)
            let points = sandbox["points"] as? [[String: Any]] ?? []
            #expect(!points.isEmpty && points.count <= 240)
            let stages = ["sent", "accepted", "confirmedShowing", "ended", "lateJoinersStarted"]
            // Cumulative: no stage ever goes down from one point to the next.
            for stage in stages {
                let values = points.compactMap { $0[stage] as? Int }
                #expect(values.count == points.count && values == values.sorted(), "\(stage): \(values)")
            }
            let last = try #require(points.last)
            #expect(last["at"] as? String == answer.json["until"] as? String)
            let funnel = try await DevicePresenceAPITests.funnel(server, app)
            for stage in stages {
                #expect(
                    last[stage] as? Int == funnel[stage] as? Int,
                    """
                    \(stage): \(String(describing: last[stage])) against the funnel's \
                    \(String(describing: funnel[stage]))
                    """
                )
            }
            #expect(
                [last["sent"], last["accepted"], last["confirmedShowing"], last["ended"]].map { $0 as? Int } == [
                    12, 12, 5, 2,
                ]
            )

            // Read as the funnel is: the app key may not, another app's key finds no such event.
            #expect(try await Self.series(server, key: app.appKey).status == 403)
            let other = try await server.makeApp("Other")
            #expect(try await Self.series(server, key: other.publisherKey).status == 404)
        }
    }
}
