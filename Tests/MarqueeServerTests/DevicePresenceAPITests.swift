import Foundation
import MarqueeCore
import MarqueeEmulator
import MarqueeTesting
import Testing

@testable import MarqueeServer

/// Devices over real HTTP with the emulator: they register with their device ID and device token,
/// report what they show, rotate their push-to-start tokens, and the event's funnel says what
/// happened; a second start reaches none of them again.
@Suite("Device presence and the funnel")
struct DevicePresenceAPITests {
    static func hex(_ index: Int) -> String { String(format: "%064x", 0xD0_0000 + index) }

    static func registration(_ device: EmulatedDevice, token: String? = nil, deviceToken: String?) -> [String: Any] {
        var item: [String: Any] = [
            "environment": "sandbox",
            "attributesType": "MatchAttributes",
            "deviceID": device.id,
            "tags": ["arsenal"],
        ]
        if let token { item["token"] = token }
        if let deviceToken { item["deviceToken"] = deviceToken }
        return item
    }

    static func report(
        _ server: TestServer,
        key: String,
        event: String = "match",
        token: String,
        _ body: [String: Any]
    ) async throws -> TestHTTPClient.Response {
        try await server.client.send("PUT", "/v1/events/\(event)/presence/\(token)", key: key, json: body)
    }

    static func funnel(_ server: TestServer, _ app: TestApp) async throws -> [String: Any] {
        let answer = try await server.client.send("GET", "/v1/events/match/funnel", key: app.publisherKey)
        #expect(answer.status == 200, "\(answer.text)")
        let environments = answer.json["environments"] as? [[String: Any]] ?? []
        return environments.first { $0["environment"] as? String == "sandbox" } ?? [:]
    }

    @Test(
        """
        20 devices start, report, 5 rotate: a second start sends nothing, the funnel is what happened, reports \
        are bounded and the app's own
        """,
        arguments: TestBackend.allCases
    )
    func funnelOfAMatch(backend: TestBackend) async throws {
        try await TestServer.run(backend) { server in
            let emulator = try server.emulator
            let app = try await server.makeApp()
            #expect(try await server.putEvent(app, key: "match").status == 201)
            let devices = try LateJoinerAPITests.makeDevices(20, emulator, app)
            // Half in a batch, half one by one, each with its device ID and device token.
            let batch = devices.prefix(10).enumerated().map { index, device in
                Self.registration(device, token: LateJoinerAPITests.token(device), deviceToken: Self.hex(index))
            }
            let registered = try await server.client.send(
                "POST",
                "/v1/push-to-start-tokens/batch",
                key: app.appKey,
                json: ["tokens": batch]
            )
            #expect(registered.status == 200, "\(registered.text)")
            for (index, device) in devices.enumerated().dropFirst(10) {
                let answer = try await server.client.send(
                    "PUT",
                    "/v1/push-to-start-tokens/\(LateJoinerAPITests.token(device))",
                    key: app.appKey,
                    json: Self.registration(device, deviceToken: Self.hex(index))
                )
                #expect(answer.status == 200, "\(answer.text)")
            }
            let query = "?environment=sandbox&attributesType=MatchAttributes"
            for index in [0, 15] {
                let shown = try await server.client.send(
                    "GET",
                    "/v1/push-to-start-tokens/\(LateJoinerAPITests.token(devices[index]))\(query)",
                    key: app.appKey
                )
                #expect(shown.json["deviceToken"] as? String == Self.hex(index), "\(shown.text)")
                #expect(shown.json["deviceID"] as? String == devices[index].id)
            }

            var body = LateJoinerAPITests.startBody()
            body["inputPushToken"] = true
            try await LateJoinerAPITests.start(server, app, event: "match", body)
            #expect(emulator.activities(in: .sandbox).count == 20)
            let activities = Dictionary(
                uniqueKeysWithValues: emulator.activities(in: .sandbox).map { ($0.deviceID, $0) }
            )

            // 0–3 show it, 4–5 report it absent, 6 ended and 7 dismissed; 16–19 report their
            // activity's update token (a push-started activity showing).
            for index in 0..<8 {
                let state = ["showing", "showing", "showing", "showing", "absent", "absent", "ended", "dismissed"][
                    index
                ]
                var report: [String: Any] = ["environment": "sandbox", "state": state]
                if state != "absent" { report["activityID"] = activities[devices[index].id]?.id ?? "" }
                let answer = try await Self.report(
                    server,
                    key: app.appKey,
                    token: LateJoinerAPITests.token(devices[index]),
                    report
                )
                #expect(answer.status == 200, "\(answer.text)")
                #expect(answer.json["state"] as? String == state)
                #expect(answer.json["started"] as? Bool == true)
            }
            let updateTokens = Dictionary(
                uniqueKeysWithValues: emulator.reportedUpdateTokens(in: .sandbox).map { ($0.deviceID, $0) }
            )
            for device in devices[16...] {
                let reported = try #require(updateTokens[device.id])
                let answer = try await server.client.send(
                    "PUT",
                    "/v1/activities/\(reported.activityID)/update-token",
                    key: app.appKey,
                    json: [
                        "eventKey": "match", "environment": "sandbox", "token": reported.token,
                        "pushToStartToken": LateJoinerAPITests.token(device),
                    ]
                )
                #expect(answer.status == 200, "\(answer.text)")
            }

            // 10–14 rotate their push-to-start tokens (same device ID); 10–12 register the new one
            // without a device token, which keeps the one they had.
            var rotated: [String: String] = [:]
            for (index, device) in devices.enumerated() where (10..<15).contains(index) {
                let token = try emulator.rotatePushToStartToken(
                    environment: .sandbox,
                    deviceID: device.id,
                    attributesType: "MatchAttributes"
                )
                rotated[device.id] = token
                let answer = try await server.client.send(
                    "PUT",
                    "/v1/push-to-start-tokens/\(token)",
                    key: app.appKey,
                    json: Self.registration(device, deviceToken: index < 13 ? nil : Self.hex(100 + index))
                )
                #expect(answer.status == 200, "\(answer.text)")
            }
            let kept = try await server.client.send(
                "GET",
                "/v1/push-to-start-tokens/\(rotated[devices[10].id] ?? "")\(query)",
                key: app.appKey
            )
            #expect(kept.json["deviceToken"] as? String == Self.hex(10), "\(kept.text)")
            #expect(
                try await server.client.send(
                    "GET",
                    "/v1/push-to-start-tokens/\(LateJoinerAPITests.token(devices[10]))\(query)",
                    key: app.appKey
                ).status == 404
            )
            // A rotated device reports under its new token, as the same device.
            let underNew = try await Self.report(
                server,
                key: app.appKey,
                token: rotated[devices[11].id] ?? "",
                ["environment": "sandbox", "state": "showing", "activityID": activities[devices[11].id]?.id ?? ""]
            )
            #expect(underNew.json["started"] as? Bool == true, "\(underNew.text)")
            // Not late joiners either: the ledger holds them.
            #expect(try await LateJoinerAPITests.pending(server, app, event: "match") == 0)

            // A second start of the event reaches nobody again.
            try await LateJoinerAPITests.start(server, app, event: "match", LateJoinerAPITests.startBody())
            let byDevice = Dictionary(grouping: emulator.activities(in: .sandbox), by: \.deviceID)
            #expect(emulator.activities(in: .sandbox).count == 20)
            for device in devices {
                #expect(byDevice[device.id]?.count == 1, "device \(device.id) shows \(byDevice[device.id]?.count ?? 0)")
            }

            let funnel = try await Self.funnel(server, app)
            #expect(funnel["accepted"] as? Int == 20, "\(funnel)")
            #expect(funnel["sent"] as? Int == 20)
            #expect(funnel["confirmedShowing"] as? Int == 9)  // 0–3, 11 and 16–19
            #expect(funnel["absent"] as? Int == 2)
            #expect(funnel["ended"] as? Int == 2)
            #expect(funnel["uncertain"] as? Int == 0)
            #expect(funnel["failed"] as? Int == 0)
            #expect(funnel["lateJoinersStarted"] as? Int == 0)
            #expect(funnel["absentThenStarted"] as? Int == 0)
            #expect((funnel["rejected"] as? [String: Any])?["devices"] as? Int == 0)
            let targeted = try #require(funnel["targeted"] as? Int)
            #expect(targeted >= 20, "\(funnel)")
            // The event's GET carries it too.
            let event = try await server.client.send("GET", "/v1/events/match", key: app.publisherKey)
            let embedded = (event.json["funnel"] as? [[String: Any]])?.first {
                $0["environment"] as? String == "sandbox"
            }
            #expect(embedded?["accepted"] as? Int == 20, "\(event.text)")

            // Device 0 has reported once: 9 more within the minute, then 429 with Retry-After.
            let showing: [String: Any] = [
                "environment": "sandbox", "state": "showing", "activityID": activities[devices[0].id]?.id ?? "",
            ]
            for _ in 0..<9 {
                #expect(
                    try await Self.report(server, key: app.appKey, token: LateJoinerAPITests.token(devices[0]), showing)
                        .status == 200
                )
            }
            let limited = try await Self.report(
                server,
                key: app.appKey,
                token: LateJoinerAPITests.token(devices[0]),
                showing
            )
            #expect(limited.status == 429, "\(limited.text)")
            #expect(limited.json["type"] as? String == "/problems/too-many-reports")
            let retryAfter = try #require(limited.header("Retry-After").flatMap(Int.init))
            #expect((1...60).contains(retryAfter))
            // Another device is not held back by it.
            #expect(
                try await Self.report(server, key: app.appKey, token: LateJoinerAPITests.token(devices[1]), showing)
                    .status == 200
            )

            // An unknown token is told to register first; another app's key sees neither the
            // report nor the funnel.
            let unknown = try await Self.report(
                server,
                key: app.appKey,
                token: Self.hex(999),
                ["environment": "sandbox", "state": "absent"]
            )
            #expect(unknown.status == 404)
            #expect((unknown.json["detail"] as? String)?.contains("register it first") == true, "\(unknown.text)")
            #expect(unknown.text.contains(Self.hex(999)) == false)
            let other = try await server.makeApp("Other")
            #expect(
                try await Self.report(server, key: other.appKey, token: LateJoinerAPITests.token(devices[2]), showing)
                    .status == 404
            )
            #expect(
                try await server.client.send("GET", "/v1/events/match/funnel", key: other.publisherKey).status == 404
            )
            // A showing report without the activity's ID is refused.
            let bare = try await Self.report(
                server,
                key: app.appKey,
                token: LateJoinerAPITests.token(devices[3]),
                ["environment": "sandbox", "state": "showing"]
            )
            #expect(bare.status == 422 || bare.status == 400, "\(bare.text)")
        }
    }
}
