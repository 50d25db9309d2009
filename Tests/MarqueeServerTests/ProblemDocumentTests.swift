import Foundation
import MarqueeAPNS
import MarqueeCore
import MarqueeEmulator
import MarqueeEngine
import MarqueeTesting
import Testing

/// Bad input gets a problem document a person can act on, and changes nothing.
@Suite("Problem documents")
struct ProblemDocumentTests {
    @Test("each kind of bad input answers its problem type, with the field named")
    func badInput() async throws {
        try await TestServer.run(.sqlite, settings: ["http.maxBodyBytes": "4096", "tokens.maxBatch": "3"]) { server in
            let app = try await server.makeApp()
            let event: [String: Any] = [
                "title": "T", "attributesType": "MatchAttributes", "environments": ["sandbox"],
                "plannedStart": "2026-11-28T15:00:00Z", "plannedEnd": "2026-11-28T17:00:00Z",
            ]
            func put(_ json: Any? = nil, body: Data? = nil) async throws -> TestHTTPClient.Response {
                try await server.client.send("PUT", "/v1/events/e1", key: app.publisherKey, json: json, body: body)
            }
            func expectProblem(
                _ response: TestHTTPClient.Response,
                _ status: Int,
                _ type: String,
                pointer: String? = nil,
                parameter: String? = nil,
                sourceLocation: SourceLocation = #_sourceLocation
            ) {
                #expect(response.status == status, "\(response.text)", sourceLocation: sourceLocation)
                #expect(response.header("Content-Type") == "application/problem+json", sourceLocation: sourceLocation)
                #expect(response.json["type"] as? String == type, "\(response.text)", sourceLocation: sourceLocation)
                #expect(
                    response.json["instance"] as? String == response.header("X-Request-ID"),
                    sourceLocation: sourceLocation
                )
                #expect((response.json["detail"] as? String)?.isEmpty == false, sourceLocation: sourceLocation)
                if let pointer {
                    let pointers =
                        (response.json["errors"] as? [[String: Any]])?.compactMap { $0["pointer"] as? String } ?? []
                    #expect(pointers.contains(pointer), "\(response.text)", sourceLocation: sourceLocation)
                }
                if let parameter {
                    let names =
                        (response.json["errors"] as? [[String: Any]])?.compactMap { $0["name"] as? String } ?? []
                    #expect(names.contains(parameter), "\(response.text)", sourceLocation: sourceLocation)
                }
            }

            expectProblem(try await put(event.merging(["surprise": 1]) { $1 }), 422, "/problems/invalid-request")
            expectProblem(
                try await put(event.merging(["title": 42]) { $1 }),
                422,
                "/problems/invalid-request",
                pointer: "/title"
            )
            expectProblem(
                try await put(event.merging(["environments": ["moon"]]) { $1 }),
                422,
                "/problems/invalid-request"
            )
            expectProblem(
                try await put(event.filter { $0.key != "title" }),
                422,
                "/problems/invalid-request",
                pointer: "/title"
            )
            expectProblem(
                try await put(event.merging(["plannedEnd": "2026-11-28T14:00:00Z"]) { $1 }),
                422,
                "/problems/invalid-request",
                pointer: "/plannedEnd"
            )
            expectProblem(try await put(body: Data("{\"title\":".utf8)), 400, "/problems/malformed-request")
            expectProblem(
                try await put(body: Data(String(repeating: "[", count: 40).utf8)),
                422,
                "/problems/json-too-deep"
            )
            expectProblem(
                try await put(body: Data(repeating: UInt8(ascii: " "), count: 5000)),
                413,
                "/problems/body-too-large"
            )
            let badKey = try await server.client.send(
                "PUT",
                "/v1/events/has%20space",
                key: app.publisherKey,
                json: event
            )
            expectProblem(badKey, 422, "/problems/invalid-request", parameter: "eventKey")
            let tooMany = try await server.client.send(
                "POST",
                "/v1/push-to-start-tokens/batch",
                key: app.appKey,
                json: [
                    "tokens": (0..<4).map {
                        ["token": String(format: "%064x", $0 + 1), "environment": "sandbox", "attributesType": "A"]
                    }
                ]
            )
            expectProblem(tooMany, 422, "/problems/invalid-request", pointer: "/tokens")
            let unknownRoute = try await server.client.send("GET", "/v1/nothing-here", key: app.appKey)
            expectProblem(unknownRoute, 404, "/problems/not-found")
            // Nothing was written by any of them.
            #expect(try await server.client.send("GET", "/v1/events/e1", key: app.publisherKey).status == 404)
            #expect(try server.emulator.channels(in: .sandbox).isEmpty)
        }
    }

    @Test("a request ID sent is echoed; one is made otherwise")
    func requestIDs() async throws {
        try await TestServer.run(.sqlite) { server in
            let echoed = try await server.client.send("GET", "/health/live", headers: ["X-Request-ID": "trace-123"])
            #expect(echoed.header("X-Request-ID") == "trace-123")
            let made = try await server.client.send("GET", "/health/ready")
            #expect(made.status == 200)
            #expect(made.header("X-Request-ID")?.isEmpty == false)
        }
    }
}
