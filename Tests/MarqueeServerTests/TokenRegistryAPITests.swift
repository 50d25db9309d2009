import Foundation
import MarqueeAPNS
import MarqueeCore
import MarqueeEmulator
import MarqueeEngine
import MarqueeTesting
import Testing

/// Push-to-start and update tokens as apps register them.
@Suite("Token registry")
struct TokenRegistryAPITests {
    static let token = "8f2a6c0d9e1b4a7c3f5e2d8b6a4c1e9f7d3b5a2c8e6f4d1b9a7c5e3f2d8b6a4c"
    static let query = "?environment=sandbox&attributesType=MatchAttributes"

    @Test("a 410 retires a token only if APNs saw it dead after its last registration", arguments: TestBackend.allCases)
    func invalidationTimestampRule(backend: TestBackend) async throws {
        try await TestServer.run(backend) { server in
            let app = try await server.makeApp()
            let registered = try await server.client.send(
                "PUT",
                "/v1/push-to-start-tokens/\(Self.token.uppercased())",
                key: app.appKey,
                json: [
                    "environment": "sandbox", "attributesType": "MatchAttributes", "iosVersion": "18.2",
                    "tags": ["arsenal"],
                ]
            )
            #expect(registered.status == 200)
            #expect(registered.json["token"] as? String == Self.token)
            let appRecord = try #require(try await server.store.apps().first { $0.bundleID == app.bundleID })
            let row = try #require(
                try await server.store.pushToStartToken(
                    appID: appRecord.id,
                    environment: .sandbox,
                    attributesType: "MatchAttributes",
                    token: Self.token
                )
            )
            let millis = { (date: Date) in Int64(date.timeIntervalSince1970 * 1000) }

            // APNs' verdict predates the registration: the device registered again since; keep it.
            let stale = TokenInvalidation(
                reason: .unregistered,
                apnsTimestampMilliseconds: millis(row.lastRegisteredAt) - 60_000
            )
            #expect(
                try await server.engine.tokens.recordInvalidation(app: appRecord, tokenRowID: row.rowID, stale) == false
            )
            #expect(
                try await server.client.send(
                    "GET",
                    "/v1/push-to-start-tokens/\(Self.token)\(Self.query)",
                    key: app.appKey
                ).json["valid"] as? Bool == true
            )

            // A newer verdict retires it.
            let fresh = TokenInvalidation(
                reason: .unregistered,
                apnsTimestampMilliseconds: millis(row.lastRegisteredAt) + 60_000
            )
            #expect(try await server.engine.tokens.recordInvalidation(app: appRecord, tokenRowID: row.rowID, fresh))
            let retired = try await server.client.send(
                "GET",
                "/v1/push-to-start-tokens/\(Self.token)\(Self.query)",
                key: app.appKey
            )
            #expect(retired.json["valid"] as? Bool == false)
            #expect(retired.json["invalidationReason"] as? String == "Unregistered")

            // Registering again revives it.
            try await Task.sleep(for: .milliseconds(5))
            _ = try await server.client.send(
                "PUT",
                "/v1/push-to-start-tokens/\(Self.token)",
                key: app.appKey,
                json: ["environment": "sandbox", "attributesType": "MatchAttributes"]
            )
            #expect(
                try await server.client.send(
                    "GET",
                    "/v1/push-to-start-tokens/\(Self.token)\(Self.query)",
                    key: app.appKey
                ).json["valid"] as? Bool == true
            )

            #expect(
                try await server.client.send(
                    "DELETE",
                    "/v1/push-to-start-tokens/\(Self.token)\(Self.query)",
                    key: app.appKey
                ).status == 204
            )
            #expect(
                try await server.client.send(
                    "GET",
                    "/v1/push-to-start-tokens/\(Self.token)\(Self.query)",
                    key: app.appKey
                ).status == 404
            )
        }
    }

    @Test("a batch registers all its tokens, or none when one is invalid", arguments: TestBackend.allCases)
    func batch(backend: TestBackend) async throws {
        try await TestServer.run(backend) { server in
            let app = try await server.makeApp()
            let tokens = (0..<1000).map { index in
                [
                    "token": String(format: "%064x", index + 1), "environment": "sandbox",
                    "attributesType": "MatchAttributes", "iosVersion": "17.4",
                ]
            }
            let accepted = try await server.client.send(
                "POST",
                "/v1/push-to-start-tokens/batch",
                key: app.appKey,
                json: ["tokens": tokens]
            )
            #expect(accepted.status == 200)
            #expect(accepted.json["registered"] as? Int == 1000)

            var mixed = tokens.map { entry in entry.merging(["token": "ff" + (entry["token"] ?? "")]) { _, new in new }
            }
            mixed[7]["token"] = "not-hex"
            let refused = try await server.client.send(
                "POST",
                "/v1/push-to-start-tokens/batch",
                key: app.appKey,
                json: ["tokens": mixed]
            )
            #expect(refused.status == 422)
            let errors = refused.json["errors"] as? [[String: Any]] ?? []
            #expect(errors.first?["pointer"] as? String == "/tokens/7/token")
            let appRecord = try #require(try await server.store.apps().first { $0.bundleID == app.bundleID })
            let first = try await server.store.pushToStartToken(
                appID: appRecord.id,
                environment: .sandbox,
                attributesType: "MatchAttributes",
                token: mixed[0]["token"] ?? ""
            )
            #expect(first == nil)
        }
    }

    @Test(
        "devices registering at once, each with its own PUT, are each answered the row a read shows; a rotation keeps the device's row",
        arguments: TestBackend.allCases
    )
    func singlesAtOnce(backend: TestBackend) async throws {
        // One writer, so that the registrations arriving while it is busy share statements.
        try await TestServer.run(backend, settings: ["tokens.registrationWriters": "1"]) { server in
            let app = try await server.makeApp()
            let appRecord = try #require(try await server.store.apps().first { $0.bundleID == app.bundleID })
            let token = { @Sendable (number: Int) in String(format: "%064x", number + 0x5100) }
            let register = { @Sendable (number: Int, device: Int) in
                try await server.client.send(
                    "PUT",
                    "/v1/push-to-start-tokens/\(token(number))",
                    key: app.appKey,
                    json: [
                        "environment": "sandbox", "attributesType": "MatchAttributes", "iosVersion": "18.2",
                        "deviceID": "device-\(device)", "tags": ["t\(number)"],
                    ]
                )
            }
            let read = { @Sendable (number: Int) in
                try await server.client.send(
                    "GET",
                    "/v1/push-to-start-tokens/\(token(number))\(Self.query)",
                    key: app.appKey
                )
            }
            // 100 devices at once, then 20 of them with a new token at once, beside 20 new devices.
            let waves = [(0..<100).map { ($0, $0) }, (0..<20).map { (1000 + $0, $0) } + (100..<120).map { ($0, $0) }]
            var rowIDs: [Int: Int64] = [:]
            for wave in waves {
                let answers = try await withThrowingTaskGroup(of: (Int, Int, TestHTTPClient.Response).self) { group in
                    for (number, device) in wave {
                        group.addTask { (number, device, try await register(number, device)) }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                for (number, device, answer) in answers {
                    #expect(answer.status == 200)
                    #expect(answer.json["token"] as? String == token(number))
                    #expect(answer.json["tags"] as? [String] == ["t\(number)"])
                    let stored = try await read(number)
                    let canonical = { (json: [String: Any]) in
                        try JSONSerialization.data(withJSONObject: json, options: .sortedKeys)
                    }
                    #expect(try canonical(answer.json) == canonical(stored.json), "token \(number)")
                    let rowID = try #require(
                        try await server.store.pushToStartToken(
                            appID: appRecord.id,
                            environment: .sandbox,
                            attributesType: "MatchAttributes",
                            token: token(number)
                        )
                    ).rowID
                    if let earlier = rowIDs[device] { #expect(rowID == earlier, "device \(device) kept its row") }
                    rowIDs[device] = rowID
                }
            }
            #expect(Set(rowIDs.values).count == 120)
            #expect(try await read(0).status == 404, "device 0's old token became its new one")
        }
    }

    @Test("an activity's new update token retires the old one", arguments: [TestBackend.sqlite])
    func updateTokens(backend: TestBackend) async throws {
        try await TestServer.run(backend) { server in
            let app = try await server.makeApp()
            #expect(try await server.putEvent(app, key: "match").status == 201)
            for token in ["aa11", "bb22"] {
                let response = try await server.client.send(
                    "PUT",
                    "/v1/activities/act-1/update-token",
                    key: app.appKey,
                    json: ["eventKey": "match", "environment": "sandbox", "token": token]
                )
                #expect(response.status == 200)
            }
            let appRecord = try #require(try await server.store.apps().first { $0.bundleID == app.bundleID })
            let activity = try #require(try await server.store.activity(appID: appRecord.id, activityID: "act-1"))
            #expect(activity.currentUpdateToken == "bb22")
            #expect(activity.updateTokens.count == 2)
            #expect(activity.updateTokens.first?.retiredAt != nil)
        }
    }
}
