import Foundation
import MarqueeTesting
import Testing

/// Failed authentications are counted per client address: past `auth.throttle.failures` within a
/// window, the address is answered 429 with `Retry-After`, whatever key it sends, until the window
/// ends. Every 401 says how to authenticate (`WWW-Authenticate: Bearer`).
@Suite("Authentication throttle")
struct AuthenticationThrottleAPITests {
    @Test(
        """
        past auth.throttle.failures wrong keys an address gets 429 with Retry-After, even with a valid key; every \
        401 carries WWW-Authenticate: Bearer
        """
    )
    func throttled() async throws {
        try await TestServer.run(
            .sqlite,
            settings: ["auth.throttle.failures": "3", "auth.throttle.windowSeconds": "600"]
        ) { server in
            let app = try await server.makeApp()
            for attempt in 0..<3 {
                let refused = try await server.client.send(
                    "GET",
                    "/v1/events",
                    key: "mq_000000000000_wrongwrongwrongwrong\(attempt)"
                )
                #expect(refused.status == 401)
                #expect(refused.header("WWW-Authenticate") == "Bearer")
            }
            let throttled = try await server.client.send("GET", "/v1/events", key: app.publisherKey)
            #expect(throttled.status == 429, "\(throttled.text)")
            #expect(throttled.json["type"] as? String == "/problems/authentication-throttled")
            let retryAfter = try #require(throttled.header("Retry-After").flatMap(Int.init))
            #expect((1...600).contains(retryAfter))
            // Health and metrics are not behind API keys, and stay answered.
            #expect(try await server.client.send("GET", "/health/live").status == 200)
        }
    }

    @Test("with auth.throttle.failures 0 nothing is throttled")
    func off() async throws {
        try await TestServer.run(.sqlite, settings: ["auth.throttle.failures": "0"]) { server in
            for _ in 0..<30 {
                let refused = try await server.client.send(
                    "GET",
                    "/v1/events",
                    key: "mq_000000000000_wrongwrongwrongwrong"
                )
                #expect(refused.status == 401)
            }
        }
    }

    @Test("a 401 from /metrics says Bearer too")
    func metricsChallenge() async throws {
        try await TestServer.run(.sqlite, settings: ["metrics.bearerToken": "scrape-token"]) { server in
            let refused = try await server.client.send("GET", "/metrics")
            #expect(refused.status == 401)
            #expect(refused.header("WWW-Authenticate") == "Bearer")
        }
    }
}
