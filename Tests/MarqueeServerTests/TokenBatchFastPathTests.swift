import Foundation
import Logging
import MarqueeCore
import MarqueeTesting
import NIOCore
import Testing

@testable import MarqueeServer

/// `POST /v1/push-to-start-tokens/batch` is answered without the generated route when the request
/// is plain (`TokenBatchMiddleware`); whatever path a batch takes, its answer is the generated
/// route's, its rows the same, and its `Idempotency-Key` kept.
@Suite("Token batches without the generated route")
struct TokenBatchFastPathTests {
    static func token(_ number: Int) -> String { String(format: "%064x", number) }

    /// Items with every field, and with only the required ones.
    static func batch(from first: Int) -> [String: Any] {
        [
            "tokens": [
                [
                    "token": token(first), "environment": "sandbox", "attributesType": "MatchAttributes",
                    "deviceID": "device-\(first)", "userID": "user-1", "tags": ["arsenal"], "iosVersion": "18.2",
                    "frequentPushesEnabled": true, "deviceToken": String(repeating: "ab", count: 32),
                ],
                ["token": token(first + 1), "environment": "sandbox", "attributesType": "MatchAttributes"],
            ]
        ]
    }

    @Test(
        "a plain batch's answer is byte for byte the generated route's, and its rows read the same",
        arguments: TestBackend.allCases
    )
    func sameAnswer(backend: TestBackend) async throws {
        let recorder = FlightRecorder(capacity: 10_000)
        try await TestServer.run(backend, clock: ManualWallClock(), logger: recorder.logger(level: .trace)) { server in
            let app = try await server.makeApp()
            let generated = try await server.client.send(
                "POST",
                TokenBatchMiddleware<MarqueeRequestContext>.template,
                key: app.appKey,
                json: Self.batch(from: 1),
                headers: TokenRegistrationFastPathTests.generatedRouteOnly
            )
            let plain = try await server.client.send(
                "POST",
                TokenBatchMiddleware<MarqueeRequestContext>.template,
                key: app.appKey,
                json: Self.batch(from: 11)
            )
            #expect(generated.status == 200, "\(generated.text)")
            #expect(plain.text == generated.text)
            #expect(plain.header("Content-Type") == generated.header("Content-Type"))
            for (viaGenerated, viaPlain) in [(1, 11), (2, 12)] {
                var rows: [[String: Any]] = []
                for number in [viaGenerated, viaPlain] {
                    let read = try await server.client.send(
                        "GET",
                        "/v1/push-to-start-tokens/\(Self.token(number))?environment=sandbox&attributesType=MatchAttributes",
                        key: app.appKey
                    )
                    #expect(read.status == 200, "\(read.text)")
                    rows.append(read.json)
                }
                #expect(rows[0]["token"] as? String == Self.token(viaGenerated))
                for field in ["deviceToken", "environment", "frequentPushesEnabled", "iosVersion", "tags", "userID"] {
                    #expect("\(rows[0][field] ?? "none")" == "\(rows[1][field] ?? "none")", "\(field)")
                }
            }
        }
        let fast = recorder.lines.filter { $0.contains("tokens registered without the generated route") }
        #expect(fast.count == 1, "the plain batch, and only that, took the fast path")
    }

    @Test(
        "a batch the generated route refuses is refused the same way, and writes nothing",
        arguments: TestBackend.allCases
    )
    func sameRefusal(backend: TestBackend) async throws {
        try await TestServer.run(backend) { server in
            let app = try await server.makeApp()
            let item: [String: Any] = ["token": Self.token(7), "environment": "sandbox", "attributesType": "A"]
            var unknownKey = item
            unknownKey["colour"] = "red"
            var missingToken = item
            missingToken["token"] = nil
            for body: [String: Any] in [
                ["tokens": [item, unknownKey]], ["tokens": [missingToken]], ["tokens": [item], "more": true],
            ] {
                let (generated, plain) = try await Self.postBothWays(body, key: app.appKey, on: server)
                TokenRegistrationFastPathTests.expectSameRefusal(plain, generated)
            }
            let row = try await server.client.send(
                "GET",
                "/v1/push-to-start-tokens/\(Self.token(7))?environment=sandbox&attributesType=A",
                key: app.appKey
            )
            #expect(row.status == 404, "a refused batch writes nothing")
        }
    }

    @Test("a plain batch sent again with its Idempotency-Key replays its answer", arguments: TestBackend.allCases)
    func idempotent(backend: TestBackend) async throws {
        try await TestServer.run(backend) { server in
            let app = try await server.makeApp()
            let body = try JSONSerialization.data(withJSONObject: Self.batch(from: 21))
            func send() async throws -> TestHTTPClient.Response {
                try await server.client.send(
                    "POST",
                    TokenBatchMiddleware<MarqueeRequestContext>.template,
                    key: app.appKey,
                    body: body,
                    headers: ["Idempotency-Key": "batch-21"]
                )
            }
            let first = try await send()
            let again = try await send()
            #expect(first.status == 200, "\(first.text)")
            #expect(first.header("Idempotent-Replayed") == nil)
            #expect(again.status == 200)
            #expect(again.header("Idempotent-Replayed") == "true")
            #expect(again.text == first.text)
        }
    }

    @Test("a body is read as the generated types read it; anything else is left to the generated route")
    func readsTheBody() throws {
        typealias Middleware = TokenBatchMiddleware<MarqueeRequestContext>
        let read = try #require(
            Middleware.registrations(
                in: ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: Self.batch(from: 1)))
            )
        )
        #expect(read.map(\.token) == [Self.token(1), Self.token(2)])
        #expect(read[0].deviceID == "device-1" && read[0].frequentPushesEnabled && read[0].tags == ["arsenal"])
        #expect(read[1].deviceID == nil && !read[1].frequentPushesEnabled && read[1].tags.isEmpty)
        let leftToTheGeneratedRoute: [String] = [
            #"{"tokens":[{"token":"aa","environment":"sandbox","attributesType":"A","colour":"red"}]}"#,
            #"{"tokens":[{"environment":"sandbox","attributesType":"A"}]}"#,
            #"{"tokens":[{"token":1,"environment":"sandbox","attributesType":"A"}]}"#,
            #"{"tokens":[{"token":"aa","environment":"sandbox","attributesType":"A","userID":null}]}"#,
            #"{"tokens":[{"token":"aa","environment":"sandbox","attributesType":"A"}],"more":1}"#,
            #"{"tokens":[["aa"]]}"#,
            #"{"tokens":{}}"#,
            #"[]"#,
        ]
        for text in leftToTheGeneratedRoute {
            #expect(Middleware.registrations(in: ByteBuffer(string: text)) == nil, "\(text)")
        }
    }

    /// The same POST through the generated route, then as a plain request.
    static func postBothWays(
        _ body: [String: Any],
        key: String,
        on server: TestServer
    ) async throws -> (generated: TestHTTPClient.Response, plain: TestHTTPClient.Response) {
        let path = TokenBatchMiddleware<MarqueeRequestContext>.template
        let generated = try await server.client.send(
            "POST",
            path,
            key: key,
            json: body,
            headers: TokenRegistrationFastPathTests.generatedRouteOnly
        )
        let plain = try await server.client.send("POST", path, key: key, json: body)
        return (generated, plain)
    }
}
