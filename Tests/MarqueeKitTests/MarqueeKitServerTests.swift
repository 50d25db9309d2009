import Foundation
import MarqueeKit
import MarqueeTesting
import Testing

/// MarqueeKit over URLSession against a real Marquee over HTTP: what it registers is what the API
/// then shows, and Marquee's problems arrive typed.
@Suite("MarqueeKit against a running Marquee")
struct MarqueeKitServerTests {
    static let tokenA = "8f2a6c0d9e1b4a7c3f5e2d8b6a4c1e9f7d3b5a2c8e6f4d1b9a7c5e3f2d8b6a4c"
    static let tokenB = "9e3b7d1f0a2c5b8d4e6f3a9c7b5d2e0f8c4a6b3d1e9f7a5c2b8d6e4f1a3c5b7d"
    static let updateToken = "5b1d9f7e3c2a4b6d8f0e1c3a5b7d9f2e4c6a8b0d1f3e5c7a9b2d4f6e8a0c1e3b"
    static let query = "?environment=sandbox&attributesType=MatchAttributes"

    static func client(_ server: TestServer, appKey: String) throws -> MarqueeKitClient {
        let configuration = MarqueeKitConfiguration(
            baseURL: try #require(URL(string: server.client.baseURL)),
            appKey: appKey,
            environment: .sandbox,
            attributesType: "MatchAttributes",
            deviceID: "device-42",
            tags: ["arsenal"],
            iosVersion: "18.2",
            frequentPushesEnabled: true
        )
        return MarqueeKitClient(
            configuration: configuration,
            transport: URLSessionTransport(),
            activities: ModelActivityHost()
        )
    }

    @Test(
        "push-to-start and update tokens registered through MarqueeKit read back through the API",
        arguments: TestBackend.allCases
    )
    func registersTokens(backend: TestBackend) async throws {
        try await TestServer.run(backend) { server in
            let app = try await server.makeApp()
            let client = try Self.client(server, appKey: app.appKey)

            #expect(try await client.register(pushToStartToken: Data(hex: Self.tokenA)) == .registered)
            let registered = try await server.client.send(
                "GET",
                "/v1/push-to-start-tokens/\(Self.tokenA)\(Self.query)",
                key: app.appKey
            )
            #expect(registered.status == 200)
            #expect(registered.json["deviceID"] as? String == "device-42")
            #expect(registered.json["tags"] as? [String] == ["arsenal"])
            #expect(registered.json["iosVersion"] as? String == "18.2")
            #expect(registered.json["frequentPushesEnabled"] as? Bool == true)
            #expect(registered.json["valid"] as? Bool == true)

            // The token rotates: the new one is registered too; the same one again sends nothing.
            #expect(try await client.register(pushToStartToken: Data(hex: Self.tokenB)) == .registered)
            #expect(try await client.register(pushToStartToken: Data(hex: Self.tokenB)) == .unchanged)
            #expect(
                try await server.client.send(
                    "GET",
                    "/v1/push-to-start-tokens/\(Self.tokenB)\(Self.query)",
                    key: app.appKey
                ).status == 200
            )

            // A push-started activity's update token, adopted as the activity of its event.
            #expect(try await server.putEvent(app, key: "ars-che-2026-11-28").status == 201)
            let activityID = "7F3A9C2E-4B1D-4E6F-8A0C-2D4E6F8A0B1C"
            #expect(
                try await client.register(
                    updateToken: Data(hex: Self.updateToken),
                    activityID: activityID,
                    eventKey: "ars-che-2026-11-28"
                ) == .registered
            )
            let activity = try await server.client.send("GET", "/v1/activities/\(activityID)", key: app.appKey)
            #expect(activity.status == 200)
            #expect(activity.json["eventKey"] as? String == "ars-che-2026-11-28")
            // The API shows its last 8 characters only.
            #expect(activity.json["updateToken"] as? String == "…" + Self.updateToken.suffix(8))
        }
    }

    @Test(
        """
        MarqueeKit's device token and presence reports are what the server takes: the token's GET shows the \
        device token, the funnel counts the reports
        """,
        arguments: TestBackend.allCases
    )
    func reportsPresence(backend: TestBackend) async throws {
        try await TestServer.run(backend) { server in
            let app = try await server.makeApp()
            #expect(try await server.putEvent(app, key: "match").status == 201)
            let client = try Self.client(server, appKey: app.appKey)
            let deviceToken = String(repeating: "0f", count: 32)
            #expect(try await client.register(pushToStartToken: Data(hex: Self.tokenA)) == .registered)
            #expect(try await client.register(deviceToken: Data(hex: deviceToken)) == .registered)
            let registered = try await server.client.send(
                "GET",
                "/v1/push-to-start-tokens/\(Self.tokenA)\(Self.query)",
                key: app.appKey
            )
            #expect(registered.json["deviceToken"] as? String == deviceToken, "\(registered.text)")

            // The app's schedule says the match is live and no activity is there: absent.
            let absent = await client.reconcile(activities: [], liveEvents: ["match"])
            #expect(absent.unsent.isEmpty, "\(absent.unsent)")
            #expect(absent.sent.map(\.state) == [.absent])
            var funnel = try await server.client.send("GET", "/v1/events/match/funnel", key: app.publisherKey)
            var sandbox = (funnel.json["environments"] as? [[String: Any]])?.first {
                $0["environment"] as? String == "sandbox"
            }
            #expect(sandbox?["absent"] as? Int == 1, "\(funnel.text)")

            // The token rotates (same device ID) and the activity appears: the device's report,
            // under its new token, replaces the last one.
            #expect(try await client.register(pushToStartToken: Data(hex: Self.tokenB)) == .registered)
            let activityID = "7F3A9C2E-4B1D-4E6F-8A0C-2D4E6F8A0B1C"
            let showing = await client.reconcile(
                activities: [ObservedActivity(id: activityID, eventKey: "match", state: .active)],
                liveEvents: ["match"]
            )
            #expect(showing.unsent.isEmpty, "\(showing.unsent)")
            #expect(showing.sent.map(\.state) == [.showing])
            funnel = try await server.client.send("GET", "/v1/events/match/funnel", key: app.publisherKey)
            sandbox = (funnel.json["environments"] as? [[String: Any]])?.first {
                $0["environment"] as? String == "sandbox"
            }
            #expect(sandbox?["absent"] as? Int == 0, "\(funnel.text)")
            #expect(sandbox?["confirmedShowing"] as? Int == 1)
            let rotated = try await server.client.send(
                "GET",
                "/v1/push-to-start-tokens/\(Self.tokenB)\(Self.query)",
                key: app.appKey
            )
            #expect(rotated.json["deviceToken"] as? String == deviceToken, "\(rotated.text)")
            #expect(
                try await server.client.send(
                    "GET",
                    "/v1/push-to-start-tokens/\(Self.tokenA)\(Self.query)",
                    key: app.appKey
                ).status == 404
            )
        }
    }

    @Test("Marquee's refusal arrives as its problem document: an unknown key is 401, typed")
    func problemsTyped() async throws {
        try await TestServer.run(.sqlite) { server in
            let client = try Self.client(server, appKey: "mq_nokey0000_notasecret")
            do throws(MarqueeKitError) {
                try await client.register(pushToStartToken: Data(hex: Self.tokenA))
                Issue.record("an unknown key was accepted")
            } catch .rejected(let rejection) {
                #expect(rejection.status == 401)
                #expect(rejection.problem?.type == "/problems/unauthorized")
                #expect(rejection.problem?.status == 401)
                #expect(rejection.problem?.instance?.isEmpty == false)
            } catch {
                Issue.record("expected Marquee's refusal, got \(error)")
            }
        }
    }

    @Test(
        "a request cancelled at any moment, the answer arriving included, ends: 300 cancellations raced against answers"
    )
    func cancellationEnds() async throws {
        try await TestServer.run(.sqlite) { server in
            let transport = URLSessionTransport()
            let url = try #require(URL(string: server.client.baseURL + "/health/live"))
            let request = MarqueeHTTPRequest(method: "GET", path: "/health/live", url: url, headers: [:], body: nil)
            var answered = 0
            for round in 0..<300 {
                let sending = Task { try await transport.send(request) }
                // A spread of moments, counted in turns of the executor rather than in time: some
                // before the request leaves, some while its answer is being delivered.
                for _ in 0..<(round % 60) { await Task.yield() }
                sending.cancel()
                if case .success(let answer) = await sending.result {
                    #expect(answer.status == 200)
                    answered += 1
                }
            }
            // What a cancellation left answered varies; that each call ended is the test.
            #expect(answered <= 300)
        }
    }
}
