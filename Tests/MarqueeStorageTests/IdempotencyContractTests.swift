import Foundation
import MarqueeCore
import MarqueeStorage
import Testing

@Suite("Idempotency keys")
struct IdempotencyContractTests {
    @Test("a key is claimed once, replays its response, and refuses a different request", arguments: Backend.allCases)
    func lifecycle(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            let store = fixture.store
            let keyID = APIKeyID()
            let now = fixture.now
            let claims = try await withThrowingTaskGroup(of: IdempotencyClaim.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        try await store.claimIdempotencyKey(
                            appID: app.id,
                            apiKeyID: keyID,
                            key: "k1",
                            requestHash: "h1",
                            now: now,
                            ttl: .seconds(3600)
                        )
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(claims.filter { $0 == .claimed }.count == 1)
            #expect(claims.filter { $0 == .inProgress }.count == 7)

            let response = StoredResponse(
                status: 201,
                contentType: "application/json",
                body: Array(#"{"id":"e1"}"#.utf8)
            )
            try await store.completeIdempotencyKey(appID: app.id, apiKeyID: keyID, key: "k1", response: response)
            #expect(
                try await store.claimIdempotencyKey(
                    appID: app.id,
                    apiKeyID: keyID,
                    key: "k1",
                    requestHash: "h1",
                    now: now,
                    ttl: .seconds(3600)
                ) == .completed(response)
            )
            #expect(
                try await store.claimIdempotencyKey(
                    appID: app.id,
                    apiKeyID: keyID,
                    key: "k1",
                    requestHash: "h2",
                    now: now,
                    ttl: .seconds(3600)
                ) == .mismatch
            )

            // Keys are per app and per API key: another key's "k1" is another key altogether.
            let other = try await fixture.makeApp("Other")
            #expect(
                try await store.claimIdempotencyKey(
                    appID: other.id,
                    apiKeyID: keyID,
                    key: "k1",
                    requestHash: "h2",
                    now: now,
                    ttl: .seconds(3600)
                ) == .claimed
            )
            let otherKey = APIKeyID()
            #expect(
                try await store.claimIdempotencyKey(
                    appID: app.id,
                    apiKeyID: otherKey,
                    key: "k1",
                    requestHash: "h1",
                    now: now,
                    ttl: .seconds(3600)
                ) == .claimed
            )
            #expect(
                try await store.claimIdempotencyKey(
                    appID: app.id,
                    apiKeyID: keyID,
                    key: "k1",
                    requestHash: "h1",
                    now: now,
                    ttl: .seconds(3600)
                ) == .completed(response)
            )
        }
    }

    @Test("an expired or released key can be claimed again, and expired keys are purged", arguments: Backend.allCases)
    func expiryAndRelease(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            let store = fixture.store
            let keyID = APIKeyID()
            #expect(
                try await store.claimIdempotencyKey(
                    appID: app.id,
                    apiKeyID: keyID,
                    key: "k",
                    requestHash: "h",
                    now: fixture.now,
                    ttl: .seconds(60)
                ) == .claimed
            )
            try await store.releaseIdempotencyKey(appID: app.id, apiKeyID: keyID, key: "k")
            #expect(
                try await store.claimIdempotencyKey(
                    appID: app.id,
                    apiKeyID: keyID,
                    key: "k",
                    requestHash: "h2",
                    now: fixture.now,
                    ttl: .seconds(60)
                ) == .claimed
            )

            fixture.clock.advance(by: 61)
            #expect(
                try await store.claimIdempotencyKey(
                    appID: app.id,
                    apiKeyID: keyID,
                    key: "k",
                    requestHash: "h3",
                    now: fixture.now,
                    ttl: .seconds(60)
                ) == .claimed
            )
            #expect(
                try await store.claimIdempotencyKey(
                    appID: app.id,
                    apiKeyID: keyID,
                    key: "old",
                    requestHash: "h",
                    now: fixture.now.addingTimeInterval(-120),
                    ttl: .seconds(60)
                ) == .claimed
            )
            #expect(try await store.purgeExpiredIdempotencyKeys(now: fixture.now) == 1)
        }
    }
}
