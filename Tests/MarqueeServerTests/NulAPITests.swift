import Foundation
import MarqueeCore
import MarqueeEmulator
import MarqueeTesting
import Testing

/// Starts and broadcasts are kept as JSON that PostgreSQL reads with `->>`, which fails for the
/// whole row on an escaped U+0000 anywhere in it: a start or broadcast whose decoded strings or keys
/// hold NUL is refused with the pointer to it, while text that merely spells `\u0000` is text, and
/// the event and its funnel stay readable.
@Suite("Values holding U+0000")
struct NulAPITests {
    @Test(
        """
        a start holding U+0000 is a 422 naming where, one whose text spells \\u0000 (a backslash, not NUL) is \
        accepted, and the event and its funnel still answer
        """,
        arguments: TestBackend.allCases
    )
    func startRefused(backend: TestBackend) async throws {
        try await TestServer.run(backend) { server in
            let app = try await server.makeApp()
            #expect(try await server.putEvent(app, key: "match").status == 201)
            var body = StartFanOutAPITests.startBody
            body["attributes"] = ["homeTeam": "Ars\u{0}enal", "awayTeam": "Chelsea"]
            body["lateJoiners"] = ["alert": ["title": "Join\u{0}ing", "body": "Arsenal v Chelsea"]]
            let refused = try await server.client.send(
                "POST",
                "/v1/events/match/starts",
                key: app.publisherKey,
                json: body
            )
            #expect(refused.status == 422, "\(refused.text)")
            #expect(pointers(refused) == ["/attributes/homeTeam", "/lateJoiners/alert/title"], "\(refused.text)")
            #expect(refused.text.contains("U+0000"))

            body["attributes"] = ["homeTeam": "Arsenal \\u0000", "awayTeam": "Chelsea"]
            body["lateJoiners"] = nil
            let accepted = try await server.client.send(
                "POST",
                "/v1/events/match/starts",
                key: app.publisherKey,
                json: body
            )
            #expect(accepted.status == 202, "\(accepted.text)")
            #expect(try await server.client.send("GET", "/v1/events/match/funnel", key: app.publisherKey).status == 200)
            #expect(try await server.client.send("GET", "/v1/events/match", key: app.publisherKey).status == 200)
        }
    }

    @Test(
        "a broadcast whose content-state key or alert holds U+0000 is a 422 naming where, and nothing is sent",
        arguments: TestBackend.allCases
    )
    func broadcastRefused(backend: TestBackend) async throws {
        try await TestServer.run(backend) { server in
            let app = try await server.makeApp()
            #expect(try await server.putEvent(app, key: "match").status == 201)
            let refused = try await server.client.send(
                "POST",
                "/v1/events/match/broadcasts",
                key: app.publisherKey,
                json: [
                    "event": "update",
                    "contentState": ["homeScore": 1, "scor/er\u{0}": "Saka"],
                    "alert": ["title": "Goal\u{0}", "body": "Arsenal 1-0"],
                ]
            )
            #expect(refused.status == 422, "\(refused.text)")
            #expect(pointers(refused) == ["/contentState/scor~1er\u{0}", "/alert/title"], "\(refused.text)")
            #expect(try server.emulator.channels(in: .sandbox).allSatisfy { $0.broadcastsReceived == 0 })
        }
    }

    private func pointers(_ response: TestHTTPClient.Response) -> [String] {
        ((response.json["errors"] as? [[String: Any]]) ?? []).compactMap { $0["pointer"] as? String }
    }
}
