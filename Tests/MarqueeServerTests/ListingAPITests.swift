import Foundation
import MarqueeTesting
import Testing

/// Lists page by cursor, with `nextCursor` and a `Link: <…>; rel="next"` header to follow.
@Suite("Cursor pagination")
struct ListingAPITests {
    @Test(
        "events and channels page by cursor, and the Link header leads to the next page",
        arguments: TestBackend.allCases
    )
    func pages(backend: TestBackend) async throws {
        try await TestServer.run(backend) { server in
            let app = try await server.makeApp()
            for key in ["a-match", "b-match", "c-match"] {
                #expect(try await server.putEvent(app, key: key).status == 201)
            }

            let first = try await server.client.send("GET", "/v1/events?limit=2", key: app.publisherKey)
            #expect(
                (first.json["events"] as? [[String: Any]])?.compactMap { $0["eventKey"] as? String } == [
                    "a-match", "b-match",
                ]
            )
            let link = try #require(first.header("Link"))
            #expect(link.hasSuffix(#"; rel="next""#))
            let next = String(link.dropFirst().prefix { $0 != ">" })
            let second = try await server.client.send("GET", next, key: app.publisherKey)
            #expect(
                (second.json["events"] as? [[String: Any]])?.compactMap { $0["eventKey"] as? String } == ["c-match"]
            )
            #expect(second.json["nextCursor"] == nil || second.json["nextCursor"] is NSNull)
            #expect(second.header("Link") == nil)

            var seen: [String] = []
            var path: String? = "/v1/channels?limit=1"
            while let current = path {
                let page = try await server.client.send("GET", current, key: app.publisherKey)
                seen += (page.json["channels"] as? [[String: Any]])?.compactMap { $0["eventKey"] as? String } ?? []
                path = page.header("Link").map { String($0.dropFirst().prefix { $0 != ">" }) }
            }
            #expect(seen == ["a-match", "b-match", "c-match"])

            let badCursor = try await server.client.send("GET", "/v1/events?after=%%%", key: app.publisherKey)
            #expect(badCursor.status == 422 || badCursor.status == 400)
        }
    }

    @Test("an empty after is the first page, on every list", arguments: TestBackend.allCases)
    func emptyCursorIsTheFirstPage(backend: TestBackend) async throws {
        try await TestServer.run(backend) { server in
            let app = try await server.makeApp()
            #expect(try await server.putEvent(app, key: "a-match").status == 201)
            for list in [
                "/v1/events?", "/v1/live-events?environment=sandbox&", "/v1/channels?", "/v1/jobs?",
                "/v1/events/a-match/schedules?", "/v1/events/a-match/channels/sandbox/broadcasts?",
            ] {
                let page = try await server.client.send("GET", "\(list)after=", key: app.publisherKey)
                #expect(page.status == 200, "\(list)after= answered \(page.status)")
            }
        }
    }
}
