import Foundation
import MarqueeCore
import MarqueeEmulator
import MarqueeTesting
import Testing

/// `Idempotency-Key` on POSTs: a retry replays the first answer and does nothing again.
@Suite("Idempotency keys")
struct IdempotencyAPITests {
    @Test("the same key and body replay the first answer; another body is refused", arguments: TestBackend.allCases)
    func replay(backend: TestBackend) async throws {
        try await TestServer.run(backend) { server in
            let app = try await server.makeApp()
            // A retry resends the same bytes, as a client's retry does.
            func createKey(_ label: String) async throws -> TestHTTPClient.Response {
                try await server.client.send(
                    "POST",
                    "/v1/apps/\(app.id)/api-keys",
                    key: app.adminKey,
                    body: Data(#"{"role":"app","label":"\#(label)"}"#.utf8),
                    headers: ["Idempotency-Key": "create-key-1"]
                )
            }
            let first = try await createKey("scoreboard")
            #expect(first.status == 201)
            #expect(first.header("Idempotent-Replayed") == nil)
            let again = try await createKey("scoreboard")
            #expect(again.status == 201)
            #expect(again.header("Idempotent-Replayed") == "true")
            // The same key, by its ID, without its secret: that was shown once, and never stored.
            #expect(
                (again.json["apiKey"] as? [String: Any])?["id"] as? String == (first.json["apiKey"] as? [String: Any])?[
                    "id"
                ] as? String
            )
            #expect(first.json["key"] is String)
            #expect(again.json["key"] == nil)
            let keys = try await server.client.send("GET", "/v1/apps/\(app.id)/api-keys", key: app.adminKey)
            #expect(
                (keys.json["apiKeys"] as? [[String: Any]])?.filter { $0["label"] as? String == "scoreboard" }.count == 1
            )

            let other = try await createKey("another label")
            #expect(other.status == 422)
            #expect(other.json["type"] as? String == "/problems/idempotency-key-reused")
        }
    }

    @Test("a retry while the first request still runs answers 409")
    func inProgress() async throws {
        try await TestServer.run(.sqlite) { server in
            let app = try await server.makeApp()
            #expect(try await server.putEvent(app, key: "slow").status == 201)
            try server.emulator.injectFault(
                APNSEmulatorFault(.delay(.seconds(30), jitter: .zero), endpoints: [.channelManagement])
            )
            let request = { @Sendable in
                try await server.client.send(
                    "POST",
                    "/v1/channels/reconcile",
                    key: app.publisherKey,
                    body: Data(#"{"environment":"sandbox"}"#.utf8),
                    headers: ["Idempotency-Key": "reconcile-1"]
                )
            }
            // The first waits 30 s on APNs; the retry comes once APNs holds the first's request,
            // however long a loaded machine took to get it there, and has those 30 s to arrive.
            async let first = request()
            let deadline = ContinuousClock.now + .seconds(60)
            while try server.emulator.counters.injectedFaults == 0, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            let second = try await request()
            #expect(second.status == 409)
            #expect(second.json["type"] as? String == "/problems/idempotency-in-progress")
            #expect(try await first.status == 200)
            let third = try await request()
            #expect(third.status == 200)
            #expect(third.header("Idempotent-Replayed") == "true")
        }
    }

    @Test("a failed request gives its key back, so the retry runs")
    func failureReleases() async throws {
        try await TestServer.run(.sqlite) { server in
            let app = try await server.makeApp()
            #expect(try await server.putEvent(app, key: "flaky").status == 201)
            try server.emulator.injectFault(
                APNSEmulatorFault(.respond(.internalServerError), endpoints: [.channelManagement])
            )
            let send = {
                try await server.client.send(
                    "POST",
                    "/v1/channels/reconcile",
                    key: app.publisherKey,
                    body: Data(#"{"environment":"sandbox"}"#.utf8),
                    headers: ["Idempotency-Key": "reconcile-2"]
                )
            }
            #expect(try await send().status == 503)
            try server.emulator.removeAllFaults()
            let retried = try await send()
            #expect(retried.status == 200)
            #expect(retried.header("Idempotent-Replayed") == nil)
        }
    }
}
