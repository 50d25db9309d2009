import Foundation
import MarqueeTesting
import Testing

/// Every JSON answer has one style, whichever code path wrote it: compact, keys sorted, `/` not
/// escaped (the generated handlers pretty-printed while problem documents were compact).
@Suite("JSON answers' style")
struct JSONStyleAPITests {
    @Test("answers, problem documents and probes are compact, with / unescaped")
    func oneStyle() async throws {
        try await TestServer.run(.sqlite) { server in
            let app = try await server.makeApp()
            let answers = [
                ("GET /health/ready", try await server.client.send("GET", "/health/ready")),
                ("GET /v1/me", try await server.client.send("GET", "/v1/me", key: app.publisherKey)),
                ("PUT /v1/events/ars-che", try await server.putEvent(app, key: "ars-che")),
                ("GET /v1/events", try await server.client.send("GET", "/v1/events", key: app.publisherKey)),
                ("a 401", try await server.client.send("GET", "/v1/me", key: "mq_unknown_key")),
                ("a 404", try await server.client.send("GET", "/v1/events/nothing-here", key: app.publisherKey)),
            ]
            for (what, answer) in answers {
                #expect(!answer.text.isEmpty, "\(what) answered nothing")
                #expect(
                    !answer.text.contains("\n") && !answer.text.contains(" : "),
                    "\(what) is pretty-printed: \(answer.text.prefix(200))"
                )
                #expect(!answer.text.contains("\\/"), "\(what) escapes /: \(answer.text.prefix(200))")
            }
        }
    }
}
