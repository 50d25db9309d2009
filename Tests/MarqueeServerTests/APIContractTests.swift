import Foundation
import MarqueeCore
import MarqueeTesting
import Testing

@testable import MarqueeServer

/// The OpenAPI document is the contract: input is held to it before an operation runs, and every
/// refusal says which field or parameter is wrong and how, in the API's words.
@Suite("The API's contract")
struct APIContractTests {
    static func event(plannedStart: Any, plannedEnd: Any = "2026-12-21T18:00:00Z") -> [String: Any] {
        [
            "title": "Arsenal v Chelsea", "attributesType": "MatchAttributes", "environments": ["sandbox"],
            "plannedStart": plannedStart, "plannedEnd": plannedEnd,
        ]
    }

    @Test("RFC 3339 date-times as the RFC allows: fractional seconds, lowercase t and z, offsets")
    func rfc3339() async throws {
        try await TestServer.run(.sqlite) { server in
            let app = try await server.makeApp()
            let accepted: [(String, String)] = [
                ("2026-12-21T15:30:37.5Z", "2026-12-21T15:30:37Z"),
                ("2026-12-21t15:30:37z", "2026-12-21T15:30:37Z"),
                ("2026-12-21T16:30:37.123456789+01:00", "2026-12-21T15:30:37Z"),
                ("2026-12-21T10:00:00-05:30", "2026-12-21T15:30:00Z"),
            ]
            for (index, (sent, answered)) in accepted.enumerated() {
                let put = try await server.client.send(
                    "PUT",
                    "/v1/events/rfc-\(index)",
                    key: app.publisherKey,
                    json: Self.event(plannedStart: sent)
                )
                #expect(put.status == 201, "\(sent): \(put.status) \(put.text)")
                #expect(put.json["plannedStart"] as? String == answered, "\(sent)")
            }
            for refused in [
                "2026-12-21 15:30:37Z", "2026-12-21T15:30:37", "2026-02-30T10:00:00Z", "2026-12-21T15:30:37.Z",
                "tomorrow",
            ] {
                let put = try await server.client.send(
                    "PUT",
                    "/v1/events/rfc-bad",
                    key: app.publisherKey,
                    json: Self.event(plannedStart: refused)
                )
                #expect(put.status == 422, "\(refused): \(put.status) \(put.text)")
                let errors = put.json["errors"] as? [[String: Any]]
                #expect(errors?.first?["pointer"] as? String == "/plannedStart", "\(refused): \(put.text)")
                #expect((errors?.first?["detail"] as? String)?.contains("RFC 3339") == true)
                #expect(!put.text.contains("not valid JSON"))
            }
        }
    }

    @Test("RFC 3339 parsing and writing")
    func rfc3339Unit() {
        #expect(RFC3339.parse("1970-01-01T00:00:00Z") == Date(timeIntervalSince1970: 0))
        #expect(RFC3339.parse("2026-12-21T15:30:37.5Z")?.timeIntervalSince1970 == 1_797_867_037.5)
        #expect(RFC3339.parse("2026-12-21T15:30:60Z") == RFC3339.parse("2026-12-21T15:31:00Z"))
        #expect(RFC3339.parse("2024-02-29T00:00:00Z") != nil)
        #expect(RFC3339.parse("2025-02-29T00:00:00Z") == nil)
        #expect(RFC3339.parse("2026-12-21T15:30:37+24:00") == nil)
        #expect(RFC3339.parse("2026-12-21T15:30:37Zjunk") == nil)
        #expect(RFC3339.format(Date(timeIntervalSince1970: 1_797_867_037.5)) == "2026-12-21T15:30:37Z")
        #expect(
            RFC3339.format(Date(timeIntervalSince1970: 1_797_867_037.5), milliseconds: true)
                == "2026-12-21T15:30:37.500Z"
        )
        #expect(RFC3339.format(Date(timeIntervalSince1970: -1)) == "1969-12-31T23:59:59Z")
        #expect(RFC3339.format(Date(timeIntervalSince1970: 0.0625), milliseconds: true) == "1970-01-01T00:00:00.062Z")
        #expect(RFC3339.format(Date(timeIntervalSince1970: 253_402_300_799)) == "9999-12-31T23:59:59Z")
        #expect(RFC3339.format(Date(timeIntervalSince1970: 253_402_300_800)) == "10000-01-01T00:00:00Z")
        #expect(RFC3339.format(Date(timeIntervalSince1970: -62_167_219_201)) == "-0001-12-31T23:59:59Z")
    }

    @Test("header values lose the optional whitespace around them, and only that")
    func fieldText() {
        #expect(HTTPFieldText.trimmed(" \tmq_abc \t") == "mq_abc")
        #expect(HTTPFieldText.trimmed("application/json") == "application/json")
        #expect(HTTPFieldText.trimmed("a b") == "a b")
        #expect(HTTPFieldText.trimmed(" \t ") == "")
        #expect(HTTPFieldText.trimmed("") == "")
        #expect(HTTPFieldText.bearerCredential("Bearer  mq_abc\t") == "mq_abc")
        #expect(HTTPFieldText.bearerCredential("bEaReR mq_abc") == "mq_abc")
        #expect(HTTPFieldText.bearerCredential("Basic bXE=") == nil)
        #expect(HTTPFieldText.bearerCredential("Bearer ") == nil)
        #expect(HTTPFieldText.bearerCredential("BEARER mq_abc") == "mq_abc")
        #expect(HTTPFieldText.bearerCredential("Bearer\tmq_abc") == nil)
        #expect(HTTPFieldText.bearerCredential("Bearer é") == "é")
        #expect(HTTPFieldText.bearerCredential(nil) == nil)
    }

    @Test("a bad path or query parameter is named (in, name) with a detail to act on")
    func parameters() async throws {
        try await TestServer.run(.sqlite) { server in
            let app = try await server.makeApp()
            let cases: [(path: String, key: String, location: String, name: String, mentions: String)] = [
                ("/v1/events/K/channels/AAA", app.appKey, "path", "environment", "sandbox, production"),
                ("/v1/channels?state=bogus", app.publisherKey, "query", "state", "active"),
                ("/v1/channels?environment=AAA", app.publisherKey, "query", "environment", "sandbox"),
                ("/v1/live-events?environment=AAA", app.appKey, "query", "environment", "sandbox"),
                ("/v1/live-events", app.appKey, "query", "environment", "required"),
                ("/v1/events?limit=abc", app.publisherKey, "query", "limit", "1 to 1000"),
                ("/v1/events?limit=0", app.publisherKey, "query", "limit", "1 to 1000"),
                ("/v1/jobs?limit=1001", app.publisherKey, "query", "limit", "1 to 1000"),
                ("/v1/events/bad%20key", app.publisherKey, "path", "eventKey", "must match"),
                ("/v1/jobs/job_1", app.publisherKey, "path", "jobID", "must match"),
            ]
            for check in cases {
                let response = try await server.client.send("GET", check.path, key: check.key)
                #expect(response.status == 422, "\(check.path): \(response.status) \(response.text)")
                #expect(response.json["type"] as? String == "/problems/invalid-request")
                let error = (response.json["errors"] as? [[String: Any]])?.first
                #expect(error?["in"] as? String == check.location, "\(check.path): \(response.text)")
                #expect(error?["name"] as? String == check.name, "\(check.path): \(response.text)")
                #expect(error?["pointer"] == nil, "\(check.path): \(response.text)")
                #expect(
                    (error?["detail"] as? String)?.contains(check.mentions) == true,
                    "\(check.path): \(response.text)"
                )
                #expect(!response.text.contains("JSON"), "\(check.path): \(response.text)")
            }
        }
    }

    @Test("a method the path does not take answers 405 with Allow from the document")
    func methodNotAllowed() async throws {
        try await TestServer.run(.sqlite) { server in
            let app = try await server.makeApp()
            for (method, path, allow) in [
                ("TRACE", "/v1/apps", "GET, HEAD, POST"), ("PUT", "/v1/apps", "GET, HEAD, POST"),
                ("DELETE", "/v1/channels/quota", "GET, HEAD"), ("POST", "/health/live", "GET, HEAD"),
                ("PATCH", "/v1/events/ars-che", "GET, HEAD, PUT, DELETE"),
            ] {
                let response = try await server.client.send(method, path, key: server.deploymentKey)
                #expect(response.status == 405, "\(method) \(path): \(response.status) \(response.text)")
                #expect(response.header("Allow") == allow, "\(method) \(path)")
                #expect(response.json["type"] as? String == "/problems/method-not-allowed")
            }
            // HEAD goes where GET goes.
            #expect(try await server.client.send("HEAD", "/v1/apps/\(app.id)", key: app.adminKey).status == 200)
            #expect(try await server.client.send("GET", "/v1/nothing-here", key: app.adminKey).status == 404)
        }
    }

    @Test("null is refused for fields that are not nullable, with the field's pointer")
    func nulls() async throws {
        try await TestServer.run(.sqlite) { server in
            let app = try await server.makeApp("Nulls")
            let rename = try await server.client.send(
                "PATCH",
                "/v1/apps/\(app.id)",
                key: app.adminKey,
                json: ["name": NSNull()]
            )
            #expect(rename.status == 422, "\(rename.text)")
            #expect((rename.json["errors"] as? [[String: Any]])?.first?["pointer"] as? String == "/name")
            #expect(
                try await server.client.send("GET", "/v1/apps/\(app.id)", key: app.adminKey).json["name"] as? String
                    == "Nulls"
            )

            var event = Self.event(plannedStart: "2026-12-21T15:00:00Z")
            event["timeline"] = NSNull()
            let put = try await server.client.send("PUT", "/v1/events/nulls", key: app.publisherKey, json: event)
            #expect(put.status == 422, "\(put.text)")
            #expect((put.json["errors"] as? [[String: Any]])?.first?["pointer"] as? String == "/timeline")

            let batch = try await server.client.send(
                "POST",
                "/v1/push-to-start-tokens/batch",
                key: app.appKey,
                json: [
                    "tokens": [
                        [
                            "token": "abcd", "environment": "sandbox", "attributesType": "MatchAttributes",
                            "tags": NSNull(),
                        ]
                    ]
                ]
            )
            #expect(batch.status == 422, "\(batch.text)")
            #expect((batch.json["errors"] as? [[String: Any]])?.first?["pointer"] as? String == "/tokens/0/tags")

            // Free-form objects pass through as sent, nulls included.
            #expect(try await server.putEvent(app, key: "ars-che").status == 201)
            let broadcast = try await server.client.send(
                "POST",
                "/v1/events/ars-che/broadcasts",
                key: app.publisherKey,
                json: ["event": "update", "contentState": ["homeScore": 1, "scorer": NSNull()]]
            )
            #expect(broadcast.status == 200, "\(broadcast.text)")
        }
    }

    @Test(
        """
        a NUL character in a string is refused with the field's pointer, on both stores (PostgreSQL's text takes \
        none)
        """,
        arguments: TestBackend.allCases
    )
    func nulCharacters(backend: TestBackend) async throws {
        try await TestServer.run(backend) { server in
            let app = try await server.makeApp()
            let token = String(repeating: "ab", count: 32)
            let put = try await server.client.send(
                "PUT",
                "/v1/push-to-start-tokens/\(token)",
                key: app.appKey,
                json: [
                    "environment": "sandbox", "attributesType": "MatchAttributes", "tags": ["ok", "a\u{0}b"],
                    "deviceID": "d\u{0}",
                ]
            )
            #expect(put.status == 422, "\(put.text)")
            let pointers = (put.json["errors"] as? [[String: Any]])?.compactMap { $0["pointer"] as? String }
            #expect(Set(pointers ?? []) == ["/deviceID", "/tags/1"], "\(put.text)")
            let event = try await server.client.send(
                "PUT",
                "/v1/events/nul",
                key: app.publisherKey,
                json: Self.event(plannedStart: "2026-12-21T15:00:00Z").merging(["title": "a\u{0}"]) { $1 }
            )
            #expect(event.status == 422, "\(event.text)")
        }
    }

    @Test("no problem detail names the server's own types")
    func noInternalNames() async throws {
        try await TestServer.run(.sqlite) { server in
            let app = try await server.makeApp()
            #expect(try await server.putEvent(app, key: "ars-che").status == 201)
            let bodies: [(String, String, Any)] = [
                ("POST", "/v1/events/ars-che/broadcasts", ["event": "update", "contentState": "x"]),
                ("POST", "/v1/events/ars-che/broadcasts", ["event": "update", "contentState": [:], "alert": 5]),
                ("POST", "/v1/events/ars-che/broadcasts", ["event": "sideways", "contentState": [:]]),
                ("POST", "/v1/events/ars-che/broadcasts", ["event": "update", "contentState": [:], "priority": 7]),
                (
                    "POST", "/v1/events/ars-che/starts",
                    ["environment": "sandbox", "attributes": [], "contentState": [:], "alert": [:]]
                ),
                ("PUT", "/v1/events/ars-che", ["title": 5]),
                ("PUT", "/v1/events/ars-che", ["title": "t", "extra": true]),
                ("POST", "/v1/push-to-start-tokens/batch", ["tokens": "all"]),
                ("POST", "/v1/push-to-start-tokens/batch", [1, 2]),
            ]
            for (method, path, json) in bodies {
                let response = try await server.client.send(method, path, key: app.adminKey, json: json)
                #expect(
                    response.status == 422 || response.status == 400,
                    "\(method) \(path) \(json): \(response.status) \(response.text)"
                )
                for name in ["OpenAPI", "Container", "Components.", "Operations.", "Swift.", "CodingKeys", "Optional("]
                {
                    #expect(!response.text.contains(name), "\(method) \(path) \(json): \(response.text)")
                }
            }
        }
    }

    @Test("an app key reads only what a device needs: channel IDs and open events, not events, jobs or schedules")
    func appKeyReads() async throws {
        try await TestServer.run(.sqlite) { server in
            let app = try await server.makeApp()
            #expect(try await server.putEvent(app, key: "ars-che").status == 201)
            for path in [
                "/v1/events/ars-che", "/v1/events", "/v1/jobs", "/v1/channels", "/v1/events/ars-che/schedules",
                "/v1/events/ars-che/channels/sandbox/broadcasts",
            ] {
                let response = try await server.client.send("GET", path, key: app.appKey)
                #expect(response.status == 403, "\(path): \(response.status)")
                #expect(response.json["type"] as? String == "/problems/forbidden")
                #expect((response.json["detail"] as? String)?.contains("role is app") == true, "\(response.text)")
            }
            #expect(
                try await server.client.send("GET", "/v1/events/ars-che/channels/sandbox", key: app.appKey).status
                    == 200
            )
            #expect(
                try await server.client.send("GET", "/v1/live-events?environment=sandbox", key: app.appKey).status
                    == 200
            )
            #expect(try await server.client.send("GET", "/v1/events/ars-che", key: app.publisherKey).status == 200)
            // A deployment key manages apps, and reads no app's events.
            let deployment = try await server.client.send("GET", "/v1/events/ars-che", key: server.deploymentKey)
            #expect(deployment.status == 403)
            #expect((deployment.json["detail"] as? String)?.contains("deployment key") == true)
        }
    }

    @Test("every operation of the document says which keys it takes and lists the answers the contract check gives")
    func documentCompleteness() async throws {
        try await TestServer.run(.sqlite) { server in
            let document = try await server.client.send("GET", "/openapi.json")
            let paths = try #require(document.json["paths"] as? [String: [String: Any]])
            var operations = 0
            for (path, item) in paths where path.hasPrefix("/v1") {
                let shared = item["parameters"] as? [Any] ?? []
                for (method, value) in item where method != "parameters" {
                    let operation = try #require(value as? [String: Any])
                    let name = "\(method.uppercased()) \(path)"
                    operations += 1
                    let roles = operation["x-marquee-roles"] as? [String]
                    #expect(roles?.isEmpty == false, "\(name) has no x-marquee-roles")
                    #expect(Set(roles ?? []).isSubset(of: ["deployment", "admin", "publisher", "app"]), "\(name)")
                    let responses = Set((operation["responses"] as? [String: Any] ?? [:]).keys)
                    #expect(responses.contains("401"), "\(name) answers 401: \(responses.sorted())")
                    // 403 is a role's refusal: an operation every kind of key may call never answers it.
                    if Set(roles ?? []) != ["deployment", "admin", "publisher", "app"] {
                        #expect(responses.contains("403"), "\(name) answers 403: \(responses.sorted())")
                    }
                    let takesInput =
                        !shared.isEmpty || operation["parameters"] != nil || operation["requestBody"] != nil
                    if takesInput { #expect(responses.contains("422"), "\(name) answers 422 for bad input") }
                    if operation["requestBody"] != nil { #expect(responses.isSuperset(of: ["400", "413"]), "\(name)") }
                }
            }
            #expect(operations >= 37)
        }
    }

    @Test("the signing-key example of the document is accepted as it stands")
    func signingKeyExample() async throws {
        try await TestServer.run(.sqlite) { server in
            let app = try await server.makeApp()
            let document = try await server.client.send("GET", "/openapi.json")
            let paths = try #require(document.json["paths"] as? [String: Any])
            let put = try #require((paths["/v1/apps/{appID}/signing-key"] as? [String: Any])?["put"] as? [String: Any])
            let content = (put["requestBody"] as? [String: Any])?["content"] as? [String: Any]
            let example = try #require((content?["application/json"] as? [String: Any])?["example"])
            let response = try await server.client.send(
                "PUT",
                "/v1/apps/\(app.id)/signing-key",
                key: app.adminKey,
                json: example
            )
            #expect(response.status == 200, "\(response.text)")
        }
    }
}
