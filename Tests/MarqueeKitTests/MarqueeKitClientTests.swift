import Foundation
import MarqueeKit
import Testing

/// The client facade over the decision types: what it sends, what it does not send again, and how
/// it answers Marquee's background push.
@Suite("MarqueeKit client")
struct MarqueeKitClientTests {
    static let tokenA = "aa" + String(repeating: "01", count: 31)
    static let tokenB = "bb" + String(repeating: "02", count: 31)
    static let deviceToken1 = "d1" + String(repeating: "03", count: 31)
    static let deviceToken2 = "d2" + String(repeating: "04", count: 31)
    static let updateToken1 = "e1" + String(repeating: "05", count: 31)
    static let updateToken2 = "e2" + String(repeating: "06", count: 31)

    static let configuration = MarqueeKitConfiguration(
        baseURL: URL(string: "https://marquee.example.com")!,
        appKey: "mq_app1_secret",
        environment: .production,
        attributesType: "MatchAttributes",
        deviceID: "device-42",
        iosVersion: "18.2"
    )

    func makeClient(
        _ transport: ScriptedTransport,
        host: ModelActivityHost = ModelActivityHost(),
        waits: RecordedWaits = RecordedWaits(),
        stateStore: (any MarqueeKitStateStore)? = nil
    ) -> MarqueeKitClient {
        MarqueeKitClient(
            configuration: Self.configuration,
            transport: transport,
            activities: host,
            stateStore: stateStore,
            now: { Date(timeIntervalSince1970: 1_795_000_000) },
            sleep: { waits.record($0) },
            randomFraction: { 0 }
        )
    }

    /// A client whose push-to-start token (`tokenA`) Marquee has: where reports can start.
    func makeRegisteredClient(
        _ transport: ScriptedTransport,
        host: ModelActivityHost = ModelActivityHost(),
        waits: RecordedWaits = RecordedWaits()
    ) async throws -> MarqueeKitClient {
        let client = makeClient(transport, host: host, waits: waits)
        try await client.register(pushToStartToken: Data(hex: Self.tokenA))
        return client
    }

    static func presencePush(_ events: [(String, String)]) -> [AnyHashable: Any] {
        [
            "aps": ["content-available": 1],
            "marquee": ["ask": "presence", "events": events.map { ["eventKey": $0.0, "environment": $0.1] }],
        ]
    }

    // MARK: Tokens

    @Test("a push-to-start token is registered once; a rotated one again; never the same twice in a row")
    func pushToStartRotation() async throws {
        let transport = ScriptedTransport()
        let client = makeClient(transport)
        #expect(try await client.register(pushToStartToken: Data(hex: Self.tokenA)) == .registered)
        #expect(try await client.register(pushToStartToken: Data(hex: Self.tokenA)) == .unchanged)
        #expect(try await client.register(pushToStartToken: Data(hex: Self.tokenB)) == .registered)
        #expect(try await client.register(pushToStartToken: Data(hex: Self.tokenB)) == .unchanged)
        #expect(try await client.register(pushToStartToken: Data(hex: Self.tokenA)) == .registered)
        #expect(
            await transport.paths == [
                "/v1/push-to-start-tokens/\(Self.tokenA)",
                "/v1/push-to-start-tokens/\(Self.tokenB)",
                "/v1/push-to-start-tokens/\(Self.tokenA)",
            ]
        )
    }

    @Test("the same token handed over twice at once is sent once")
    func concurrentRepeats() async throws {
        let transport = ScriptedTransport()
        let client = makeClient(transport)
        async let first = client.register(pushToStartToken: Data(hex: Self.tokenA))
        async let second = client.register(pushToStartToken: Data(hex: Self.tokenA))
        let outcomes = try await [first, second]
        #expect(outcomes.sorted { "\($0)" < "\($1)" } == [.registered, .unchanged])
        #expect(await transport.requests.count == 1)
    }

    @Test("the device token rides with the push-to-start token, and a new one registers it again")
    func deviceTokenRidesAlong() async throws {
        let transport = ScriptedTransport()
        let client = makeClient(transport)
        #expect(try await client.register(deviceToken: Data(hex: Self.deviceToken1)) == .waitingForPushToStartToken)
        #expect(await transport.requests.isEmpty)
        #expect(try await client.register(pushToStartToken: Data(hex: Self.tokenA)) == .registered)
        #expect(try await client.register(deviceToken: Data(hex: Self.deviceToken1)) == .unchanged)
        #expect(try await client.register(deviceToken: Data(hex: Self.deviceToken2)) == .registered)
        let bodies = await transport.bodies()
        #expect(bodies.map { $0["deviceToken"] as? String } == [Self.deviceToken1, Self.deviceToken2])
        #expect(await transport.paths == Array(repeating: "/v1/push-to-start-tokens/\(Self.tokenA)", count: 2))
    }

    @Test("an update token is registered once per token, with the push-to-start token its start went to")
    func updateTokenRotation() async throws {
        let transport = ScriptedTransport()
        let client = try await makeRegisteredClient(transport)
        #expect(
            try await client.register(updateToken: Data(hex: Self.updateToken1), activityID: "A1", eventKey: "ars-che")
                == .registered
        )
        #expect(
            try await client.register(updateToken: Data(hex: Self.updateToken1), activityID: "A1", eventKey: "ars-che")
                == .unchanged
        )
        #expect(
            try await client.register(updateToken: Data(hex: Self.updateToken2), activityID: "A1", eventKey: "ars-che")
                == .registered
        )
        let bodies = await transport.bodies()
        #expect(
            await transport.paths.dropFirst() == ["/v1/activities/A1/update-token", "/v1/activities/A1/update-token"]
        )
        #expect(bodies.dropFirst().map { $0["token"] as? String } == [Self.updateToken1, Self.updateToken2])
        #expect(
            bodies.dropFirst().allSatisfy {
                $0["pushToStartToken"] as? String == Self.tokenA && $0["eventKey"] as? String == "ars-che"
            }
        )
    }

    @Test("a registration Marquee refused is not remembered: the next hand-over sends it again")
    func refusedIsNotRemembered() async throws {
        let problem = Data(
            #"""
            {"type":"/problems/invalid-request","title":"Invalid request","status":422,"detail":"tags: too many",\#
            "instance":"req-1"}
            """#
            .utf8
        )
        let transport = ScriptedTransport { _, index in
            index == 0
                ? MarqueeHTTPResponse(status: 422, headers: ["Content-Type": "application/problem+json"], body: problem)
                : MarqueeHTTPResponse(status: 200)
        }
        let client = makeClient(transport)
        let refusal = MarqueeKitError.rejected(
            MarqueeRejection(
                status: 422,
                problem: MarqueeProblem(
                    type: "/problems/invalid-request",
                    title: "Invalid request",
                    status: 422,
                    detail: "tags: too many",
                    instance: "req-1"
                )
            )
        )
        await #expect(throws: refusal) { try await client.register(pushToStartToken: Data(hex: Self.tokenA)) }
        #expect(try await client.register(pushToStartToken: Data(hex: Self.tokenA)) == .registered)
        #expect(await transport.requests.count == 2)
    }

    @Test("what Marquee accepted survives a relaunch: the same token is not sent again")
    func survivesRelaunch() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "marqueekit-\(UUID().uuidString)/state.json"
        )
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let transport = ScriptedTransport()
        try await makeClient(transport, stateStore: FileStateStore(url: file)).register(
            pushToStartToken: Data(hex: Self.tokenA)
        )
        let relaunched = makeClient(transport, stateStore: FileStateStore(url: file))
        #expect(try await relaunched.register(pushToStartToken: Data(hex: Self.tokenA)) == .unchanged)
        #expect(await transport.requests.count == 1)
    }

    // MARK: Presence

    @Test("Marquee's background push is answered with what the host lists: absent and showing")
    func answersBackgroundPush() async throws {
        let transport = ScriptedTransport()
        let host = ModelActivityHost([ObservedActivity(id: "B1", eventKey: "liv-mci", state: .active)])
        let client = try await makeRegisteredClient(transport, host: host)
        let outcome = try await client.handleBackgroundPush(
            userInfo: Self.presencePush([("ars-che", "production"), ("liv-mci", "production")])
        )
        #expect(
            outcome.sent == [
                PresenceReport(eventKey: "ars-che", state: .absent),
                PresenceReport(eventKey: "liv-mci", state: .showing, activityID: "B1"),
            ]
        )
        #expect(outcome.unsent.isEmpty)
        let bodies = await transport.bodies()
        #expect(
            await transport.paths.dropFirst() == [
                "/v1/events/ars-che/presence/\(Self.tokenA)", "/v1/events/liv-mci/presence/\(Self.tokenA)",
            ]
        )
        #expect(bodies.dropFirst().map { $0["state"] as? String } == ["absent", "showing"])
        #expect(bodies.last?["activityID"] as? String == "B1")

        // Nothing changed, nobody asked: nothing is sent.
        #expect(await client.reconcile() == ReconcileOutcome())
        #expect(await transport.requests.count == 3)
    }

    @Test("a push that is not Marquee's is handed back; events of the other environment are not this build's")
    func foreignPushes() async throws {
        let transport = ScriptedTransport()
        let client = try await makeRegisteredClient(transport)
        await #expect(throws: MarqueeBackgroundPushError.notMarquee) {
            try await client.handleBackgroundPush(userInfo: ["aps": ["alert": "Goal!"]])
        }
        let outcome = try await client.handleBackgroundPush(userInfo: Self.presencePush([("ars-che", "sandbox")]))
        #expect(outcome == ReconcileOutcome())
        #expect(await transport.requests.count == 1)
    }

    @Test("Marquee does not know the token (404): it is registered again and the report resent")
    func unknownTokenRegisteredAgain() async throws {
        let transport = ScriptedTransport { request, index in
            request.path.contains("/presence/") && index == 1
                ? MarqueeHTTPResponse(
                    status: 404,
                    body: Data(#"{"type":"/problems/not-found","title":"Not found","status":404}"#.utf8)
                )
                : MarqueeHTTPResponse(status: 200)
        }
        let client = try await makeRegisteredClient(transport)
        let outcome = await client.reconcile(activities: [], liveEvents: ["ars-che"])
        #expect(outcome.sent == [PresenceReport(eventKey: "ars-che", state: .absent)])
        #expect(
            await transport.paths == [
                "/v1/push-to-start-tokens/\(Self.tokenA)",
                "/v1/events/ars-che/presence/\(Self.tokenA)",
                "/v1/push-to-start-tokens/\(Self.tokenA)",
                "/v1/events/ars-che/presence/\(Self.tokenA)",
            ]
        )
    }

    @Test("reporting too often (429): Retry-After is waited out, then the report goes")
    func retryAfterHonoured() async throws {
        let transport = ScriptedTransport { request, index in
            request.path.contains("/presence/") && index == 1
                ? MarqueeHTTPResponse(
                    status: 429,
                    headers: ["retry-after": "3"],
                    body: Data(#"{"type":"/problems/rate-limited","title":"Too many reports","status":429}"#.utf8)
                )
                : MarqueeHTTPResponse(status: 200)
        }
        let waits = RecordedWaits()
        let client = try await makeRegisteredClient(transport, waits: waits)
        let outcome = await client.reconcile(activities: [
            ObservedActivity(id: "A1", eventKey: "ars-che", state: .active)
        ])
        #expect(outcome.sent == [PresenceReport(eventKey: "ars-che", state: .showing, activityID: "A1")])
        #expect(waits.all == [.seconds(3)])
        #expect(await transport.requests.count == 3)
    }

    @Test("a report that could not be sent is kept and sent by the next reconciliation")
    func unsentKept() async throws {
        let failing = LockedValue(true)
        let transport = ScriptedTransport { request, _ in
            request.path.contains("/presence/") && failing.value
                ? MarqueeHTTPResponse(status: 503) : MarqueeHTTPResponse(status: 200)
        }
        let client = try await makeRegisteredClient(transport)
        let activities = [ObservedActivity(id: "A1", eventKey: "ars-che", state: .active)]
        let first = await client.reconcile(activities: activities)
        #expect(first.sent.isEmpty)
        #expect(first.unsent.map(\.report) == [PresenceReport(eventKey: "ars-che", state: .showing, activityID: "A1")])
        #expect(first.unsent.first?.error == .rejected(MarqueeRejection(status: 503)))
        failing.mutate { $0 = false }
        #expect(
            await client.reconcile(activities: activities).sent == [
                PresenceReport(eventKey: "ars-che", state: .showing, activityID: "A1")
            ]
        )
    }

    @Test("without a push-to-start token nothing can be reported, and the report waits")
    func noTokenYet() async throws {
        let transport = ScriptedTransport()
        let client = makeClient(transport)
        let outcome = await client.reconcile(activities: [
            ObservedActivity(id: "A1", eventKey: "ars-che", state: .active)
        ])
        #expect(outcome.sent.isEmpty)
        #expect(outcome.unsent.count == 1)
        #expect(await transport.requests.isEmpty)
    }

    @Test("a second activity of an event is ended through the host, and its update token is not registered")
    func secondActivityEnded() async throws {
        let transport = ScriptedTransport()
        let host = ModelActivityHost([ObservedActivity(id: "A1", eventKey: "ars-che", state: .active)])
        let client = try await makeRegisteredClient(transport, host: host)
        _ = await client.reconcile()
        await host.set([
            ObservedActivity(id: "A1", eventKey: "ars-che", state: .active),
            ObservedActivity(id: "A2", eventKey: "ars-che", state: .active),
        ])
        let outcome = await client.reconcile()
        #expect(outcome.endedActivityIDs == ["A2"])
        #expect(await host.ended == ["A2"])
        #expect(await host.activities.map(\.id) == ["A1"])
        #expect(
            try await client.register(updateToken: Data(hex: Self.updateToken1), activityID: "A2", eventKey: "ars-che")
                == .secondActivity
        )
        #expect(await transport.paths.filter { $0.contains("update-token") }.isEmpty)
    }

    @Test("an update token's registration already tells Marquee the activity shows: no report repeats it")
    func updateTokenCountsAsShowing() async throws {
        let transport = ScriptedTransport()
        let client = try await makeRegisteredClient(transport)
        try await client.register(updateToken: Data(hex: Self.updateToken1), activityID: "A1", eventKey: "ars-che")
        #expect(
            await client.reconcile(activities: [ObservedActivity(id: "A1", eventKey: "ars-che", state: .active)])
                == ReconcileOutcome()
        )
        #expect(await transport.requests.count == 2)
    }
}
