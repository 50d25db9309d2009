import Foundation
import MarqueeCore
import MarqueeStorage
import MarqueeTesting
import PostgresNIO
import Testing

/// An `Idempotency-Key` belongs to the API key that sent it: another key sending the same
/// `Idempotency-Key` and request never gets the stored answer, and its request goes through its
/// own role check; and no stored answer holds a secret.
@Suite("Idempotency keys per API key")
struct IdempotencyIsolationAPITests {
    @Test(
        """
        an admin's key creation replayed with the app's app key or publisher key is refused by role, never the \
        stored answer, and shows no secret
        """,
        arguments: TestBackend.allCases
    )
    func keyCreationReplayedByOtherKeys(backend: TestBackend) async throws {
        try await TestServer.run(backend) { server in
            let app = try await server.makeApp()
            let path = "/v1/apps/\(app.id)/api-keys"
            let body = Data(#"{"role":"publisher","label":"ci"}"#.utf8)
            let created = try await server.client.send(
                "POST",
                path,
                key: app.adminKey,
                body: body,
                headers: ["Idempotency-Key": "k1"]
            )
            #expect(created.status == 201)
            let secret = try #require(created.json["key"] as? String)

            for other in [app.appKey, app.publisherKey] {
                let replayed = try await server.client.send(
                    "POST",
                    path,
                    key: other,
                    body: body,
                    headers: ["Idempotency-Key": "k1"]
                )
                #expect(replayed.status == 403, "\(replayed.text)")
                #expect(replayed.header("Idempotent-Replayed") == nil)
                #expect(!replayed.text.contains(secret))
                #expect(!replayed.text.contains("mq_"))
            }
            // The admin's own replay is the stored answer: the key by its ID, not its secret.
            let own = try await server.client.send(
                "POST",
                path,
                key: app.adminKey,
                body: body,
                headers: ["Idempotency-Key": "k1"]
            )
            #expect(own.status == 201)
            #expect(own.header("Idempotent-Replayed") == "true")
            #expect(!own.text.contains(secret))
            #expect(
                (own.json["apiKey"] as? [String: Any])?["id"] as? String == (created.json["apiKey"] as? [String: Any])?[
                    "id"
                ] as? String
            )
            // The new key works: the replays made no other.
            let keys = try await server.client.send("GET", path, key: app.adminKey)
            #expect((keys.json["apiKeys"] as? [[String: Any]])?.filter { $0["label"] as? String == "ci" }.count == 1)
        }
    }

    @Test(
        "a publisher's broadcast replayed with the app key is refused (403): the role check runs",
        arguments: TestBackend.allCases
    )
    func broadcastReplayedByAppKey(backend: TestBackend) async throws {
        try await TestServer.run(backend) { server in
            let app = try await server.makeApp()
            #expect(try await server.putEvent(app, key: "ars-che").status == 201)
            let path = "/v1/events/ars-che/broadcasts"
            let body = Data(#"{"event":"update","contentState":{"home":1,"away":0}}"#.utf8)
            let sent = try await server.client.send(
                "POST",
                path,
                key: app.publisherKey,
                body: body,
                headers: ["Idempotency-Key": "goal-1"]
            )
            #expect(sent.status == 200, "\(sent.text)")
            let replayed = try await server.client.send(
                "POST",
                path,
                key: app.appKey,
                body: body,
                headers: ["Idempotency-Key": "goal-1"]
            )
            #expect(replayed.status == 403, "\(replayed.text)")
            #expect(replayed.header("Idempotent-Replayed") == nil)
            let own = try await server.client.send(
                "POST",
                path,
                key: app.publisherKey,
                body: body,
                headers: ["Idempotency-Key": "goal-1"]
            )
            #expect(own.status == 200)
            #expect(own.header("Idempotent-Replayed") == "true")
        }
    }

    @Test(
        "the database holds no API key secret: not in the idempotency table, nor anywhere in SQLite's files",
        arguments: TestBackend.allCases
    )
    func noSecretStored(backend: TestBackend) async throws {
        try await TestServer.withDatabase(backend) { database in
            let secret = try await TestServer.run(on: database) { server in
                let app = try await server.makeApp()
                let created = try await server.client.send(
                    "POST",
                    "/v1/apps/\(app.id)/api-keys",
                    key: app.adminKey,
                    body: Data(#"{"role":"app","label":"kiosk"}"#.utf8),
                    headers: ["Idempotency-Key": "kiosk-key"]
                )
                #expect(created.status == 201)
                return try #require(created.json["key"] as? String)
            }
            let stored = try await IdempotencyTable.bodies(of: database)
            #expect(stored.count == 1)
            #expect(stored.allSatisfy { !$0.contains(Array(secret.utf8)) })
            if database.backend == .sqlite {
                // The file and its write-ahead log, as they lie on disk.
                for file in try FileManager.default.contentsOfDirectory(atPath: database.dataDirectory)
                where file.hasPrefix("marquee.sqlite") {
                    let bytes = try Data(
                        contentsOf: URL(fileURLWithPath: database.dataDirectory).appendingPathComponent(file)
                    )
                    #expect(bytes.range(of: Data(secret.utf8)) == nil, "the secret is in \(file)")
                }
            }
        }
    }
}

/// The stored answers of `idempotency_keys`, read from the database itself.
enum IdempotencyTable {
    static func bodies(of database: TestDatabase) async throws -> [[UInt8]] {
        switch database.backend {
        case .sqlite:
            // sqlite3 reads the file as another process would (the server has stopped).
            let path = URL(fileURLWithPath: database.dataDirectory).appendingPathComponent("marquee.sqlite").path
            let ended = try await ChildProcess.run(
                ["/usr/bin/env", "sqlite3", path, "SELECT hex(response_body) FROM idempotency_keys"],
                errors: .discarded
            )
            guard ended.status == 0 else { throw TestSetupError("sqlite3 failed (\(ended.status))") }
            return ended.output.split(separator: "\n").map { Self.bytes(hex: $0) }
        case .postgres:
            let url = try #require(database.url)
            let target = try PostgresConnectionURL(url)
            let client = PostgresClient(configuration: target.configuration)
            return try await withThrowingTaskGroup(of: [[UInt8]].self) { group in
                group.addTask {
                    await client.run()
                    return []
                }
                defer { group.cancelAll() }
                var bodies: [[UInt8]] = []
                for try await body in try await client.query("SELECT response_body FROM idempotency_keys").decode(
                    Data?.self
                ) {
                    bodies.append(body.map { Array($0) } ?? [])
                }
                return bodies
            }
        }
    }

    static func bytes(hex: Substring) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex, let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex) {
            bytes.append(UInt8(hex[index..<next], radix: 16) ?? 0)
            index = next
        }
        return bytes
    }
}

extension Array where Element == UInt8 {
    func contains(_ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, needle.count <= count else { return false }
        return (0...(count - needle.count)).contains { self[$0..<($0 + needle.count)].elementsEqual(needle) }
    }
}
