import Foundation
import Logging
import MarqueeCore
import MarqueeTesting
import Testing

@testable import MarqueeServer

/// `PUT /v1/push-to-start-tokens/{token}` is answered without the generated route when the
/// request is plain (`TokenRegistrationMiddleware`); whatever path a request takes, its answer is
/// the generated route's.
@Suite("Token registration without the generated route")
struct TokenRegistrationFastPathTests {
    static let token = "8f2a6c0d9e1b4a7c3f5e2d8b6a4c1e9f7d3b5a2c8e6f4d1b9a7c5e3f2d8b6a4c"
    /// A body type the generated route decodes as JSON and the fast path leaves to it.
    static let generatedRouteOnly = ["Content-Type": "application/json;charset=UTF-8"]

    static var bodies: [[String: Any]] {
        [
            ["environment": "sandbox", "attributesType": "MatchAttributes"],
            [
                "environment": "production", "attributesType": "MatchAttributes", "deviceID": "device-1",
                "userID": "user-1", "tags": ["arsenal", "premier-league"], "iosVersion": "18.2",
                "frequentPushesEnabled": true, "deviceToken": String(repeating: "ab", count: 32),
            ],
            [
                "environment": "sandbox", "attributesType": "MatchAttributes", "tags": [],
                "frequentPushesEnabled": false,
            ],
        ]
    }

    @Test(
        "a plain registration's answer is byte for byte the generated route's, on the same row",
        arguments: TestBackend.allCases
    )
    func sameAnswer(backend: TestBackend) async throws {
        // A clock that stands still: both registrations of a token write the same instants.
        let recorder = FlightRecorder(capacity: 10_000)
        // No key remembered: every plain registration goes through Hummingbird to the middleware
        // (with keys remembered they are answered on the event loop: `answeredOnTheEventLoop`).
        try await TestServer.run(
            backend,
            settings: ["auth.cacheSeconds": "0"],
            clock: ManualWallClock(),
            logger: recorder.logger(level: .trace)
        ) { server in
            let app = try await server.makeApp()
            for (index, body) in Self.bodies.enumerated() {
                let path = "/v1/push-to-start-tokens/\(String(repeating: "0", count: 63))\(index + 1)"
                let (generated, fast) = try await Self.putBothWays(path, body, key: app.appKey, on: server)
                #expect(generated.status == 200, "\(generated.text)")
                #expect(fast.status == 200, "\(fast.text)")
                #expect(fast.text == generated.text)
                #expect(fast.header("Content-Type") == generated.header("Content-Type"))
            }
        }
        let fastAnswers = recorder.lines.filter { $0.contains("token registered without the generated route") }
        #expect(fastAnswers.count == Self.bodies.count, "the plain requests, and only those, took the fast path")
    }

    @Test(
        """
        with the key remembered, a plain registration is answered on the event loop as the generated route \
        answers it, a refusal by the engine included
        """,
        arguments: TestBackend.allCases
    )
    func answeredOnTheEventLoop(backend: TestBackend) async throws {
        let recorder = FlightRecorder(capacity: 10_000)
        try await TestServer.run(backend, clock: ManualWallClock(), logger: recorder.logger(level: .debug)) { server in
            let app = try await server.makeApp(environments: ["sandbox"])
            // Else a late notification of the app's creation could forget the key in between.
            try await server.settleNotifications(loggedIn: recorder)
            for (index, body) in Self.bodies.enumerated() where body["environment"] as? String == "sandbox" {
                let path = "/v1/push-to-start-tokens/\(String(repeating: "0", count: 63))\(index + 1)"
                let (generated, fast) = try await Self.putBothWays(path, body, key: app.appKey, on: server)
                #expect(generated.status == 200, "\(generated.text)")
                #expect(fast.status == 200, "\(fast.text)")
                #expect(fast.text == generated.text)
                ChannelReadOnEventLoopTests.expectSameHeaders(fast, generated)
            }
            // The app registers only in sandbox: the engine refuses production, after the contract.
            var refused = Self.bodies[0]
            refused["environment"] = "production"
            let path = "/v1/push-to-start-tokens/\(Self.token)"
            let (generated, fast) = try await Self.putBothWays(path, refused, key: app.appKey, on: server)
            #expect(generated.status == 422, "\(generated.text)")
            #expect(fast.status == 422, "\(fast.text)")
            #expect(fast.json["type"] as? String == generated.json["type"] as? String)
            #expect(fast.json["detail"] as? String == generated.json["detail"] as? String)
            #expect(fast.json["errors"] as? [[String: String]] == generated.json["errors"] as? [[String: String]])
            #expect(fast.json["instance"] as? String == fast.header("X-Request-ID"))
            ChannelReadOnEventLoopTests.expectSameHeaders(fast, generated)
        }
        let answeredHere = recorder.lines.filter {
            $0.contains("on the event loop") && $0.contains("/v1/push-to-start-tokens/")
        }
        #expect(answeredHere.count == 3, "the plain requests, and only those: \(answeredHere)")
    }

    @Test(
        "a body the generated route refuses is refused the same way: an unknown key, a missing required one",
        arguments: TestBackend.allCases
    )
    func sameRefusal(backend: TestBackend) async throws {
        try await TestServer.run(backend) { server in
            let app = try await server.makeApp()
            let refused: [[String: Any]] = [
                ["environment": "sandbox", "attributesType": "MatchAttributes", "colour": "red"],
                ["environment": "sandbox"],
            ]
            for body in refused {
                let path = "/v1/push-to-start-tokens/\(Self.token)"
                let (generated, plain) = try await Self.putBothWays(path, body, key: app.appKey, on: server)
                Self.expectSameRefusal(plain, generated)
            }
            let row = try await server.client.send(
                "GET",
                "/v1/push-to-start-tokens/\(Self.token)?environment=sandbox&attributesType=MatchAttributes",
                key: app.appKey
            )
            #expect(row.status == 404, "a refused registration writes nothing")
        }
    }

    @Test("the body is read as the generated type reads it; anything else is left to the generated route")
    func readsTheBody() throws {
        let full = try #require(try Self.object(Self.bodies[1]))
        let registration = try #require(PushToStartRegistration(requestBody: full, token: "aa"))
        #expect(
            registration
                == PushToStartRegistration(
                    environment: .production,
                    attributesType: "MatchAttributes",
                    token: "aa",
                    deviceID: "device-1",
                    userID: "user-1",
                    tags: ["arsenal", "premier-league"],
                    iosVersion: "18.2",
                    frequentPushesEnabled: true,
                    deviceToken: String(repeating: "ab", count: 32)
                )
        )
        let leftToTheGeneratedRoute: [String] = [
            #"{"environment":"sandbox","attributesType":"A","colour":"red"}"#,
            #"{"environment":"sandbox"}"#,
            #"{"environment":"staging","attributesType":"A"}"#,
            #"{"environment":"sandbox","attributesType":"A","tags":["a",1]}"#,
            #"{"environment":"sandbox","attributesType":"A","userID":null}"#,
            #"{"environment":"sandbox","attributesType":"A","frequentPushesEnabled":"yes"}"#,
        ]
        for text in leftToTheGeneratedRoute {
            guard case .object(let object) = try JSONParser.parse(Array(text.utf8)) else {
                Issue.record("not an object: \(text)")
                continue
            }
            #expect(PushToStartRegistration(requestBody: object, token: "aa") == nil, "\(text)")
        }
    }

    @Test("the path's token is taken as it is, and one with % is left to the generated route")
    func readsThePath() {
        typealias Middleware = TokenRegistrationMiddleware<MarqueeRequestContext>
        #expect(Middleware.token(inPath: "/v1/push-to-start-tokens/ABCD") == "ABCD")
        #expect(Middleware.token(inPath: "/v1/push-to-start-tokens/AB%43D") == nil)
        #expect(Middleware.token(inPath: "/v1/push-to-start-tokens/") == nil)
        #expect(Middleware.token(inPath: "/v1/push-to-start-tokens/ab/cd") == nil)
    }

    /// A plain request refused as the generated route refuses it: a client error of the same status,
    /// problem type and field errors.
    static func expectSameRefusal(
        _ plain: TestHTTPClient.Response,
        _ generated: TestHTTPClient.Response,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect((400..<500).contains(plain.status), "\(plain.text)", sourceLocation: sourceLocation)
        #expect(plain.status == generated.status, sourceLocation: sourceLocation)
        #expect(plain.json["type"] as? String == generated.json["type"] as? String, sourceLocation: sourceLocation)
        #expect(
            plain.json["errors"] as? [[String: String]] == generated.json["errors"] as? [[String: String]],
            sourceLocation: sourceLocation
        )
    }

    /// The same PUT through the generated route, then as a plain request.
    static func putBothWays(
        _ path: String,
        _ body: [String: Any],
        key: String,
        on server: TestServer
    ) async throws -> (generated: TestHTTPClient.Response, plain: TestHTTPClient.Response) {
        let generated = try await server.client.send("PUT", path, key: key, json: body, headers: generatedRouteOnly)
        let plain = try await server.client.send("PUT", path, key: key, json: body)
        return (generated, plain)
    }

    static func object(_ body: [String: Any]) throws -> JSONObject? {
        let data = try JSONSerialization.data(withJSONObject: body)
        guard case .object(let object) = try JSONParser.parse(Array(data)) else { return nil }
        return object
    }
}
