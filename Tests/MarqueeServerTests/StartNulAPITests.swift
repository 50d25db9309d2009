import Foundation
import MarqueeTesting
import Testing

/// A start is stored as JSON that PostgreSQL reads with `->>`, which fails on a string holding
/// U+0000 anywhere in the row: such a start is refused, and the event's funnel stays readable.
@Suite("Starts holding U+0000")
struct StartNulAPITests {
    @Test("a start whose attributes hold U+0000 is a 422 naming it; the event and its funnel still answer", arguments: TestBackend.allCases)
    func nulRefused(backend: TestBackend) async throws {
        try await TestServer.run(backend) { server in
            let app = try await server.makeApp()
            #expect(try await server.putEvent(app, key: "match").status == 201)
            var body = StartFanOutAPITests.startBody
            body["attributes"] = ["homeTeam": "Ars\u{0}enal", "awayTeam": "Chelsea"]
            let refused = try await server.client.send("POST", "/v1/events/match/starts", key: app.publisherKey, json: body)
            #expect(refused.status == 422)
            #expect(refused.text.contains("U+0000"))
            #expect(try await server.client.send("GET", "/v1/events/match/funnel", key: app.publisherKey).status == 200)
            #expect(try await server.client.send("GET", "/v1/events/match", key: app.publisherKey).status == 200)
        }
    }
}
