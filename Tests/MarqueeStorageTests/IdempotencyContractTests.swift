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
            let now = fixture.now
            let claims = try await withThrowingTaskGroup(of: IdempotencyClaim.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        try await store.claimIdempotencyKey(appID: app.id, key: "k1", requestHash: "h1", now: now, ttl: .seconds(3600))
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(claims.filter { $0 == .claimed }.count == 1)
            #expect(claims.filter { $0 == .inProgress }.count == 7)

            let response = StoredResponse(status: 201, contentType: "application/json", body: Array(#"{"id":"e1"}"#.utf8))
            try await store.completeIdempotencyKey(appID: app.id, key: "k1", response: response)
            #expect(try await store.claimIdempotencyKey(appID: app.id, key: "k1", requestHash: "h1", now: now, ttl: .seconds(3600)) == .completed(response))
            #expect(try await store.claimIdempotencyKey(appID: app.id, key: "k1", requestHash: "h2", now: now, ttl: .seconds(3600)) == .mismatch)

            // Keys are per app.
            let other = try await fixture.makeApp("Other")
            #expect(try await store.claimIdempotencyKey(appID: other.id, key: "k1", requestHash: "h2", now: now, ttl: .seconds(3600)) == .claimed)
        }
    }

    @Test("an expired or released key can be claimed again, and expired keys are purged", arguments: Backend.allCases)
    func expiryAndRelease(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            let store = fixture.store
            #expect(try await store.claimIdempotencyKey(appID: app.id, key: "k", requestHash: "h", now: fixture.now, ttl: .seconds(60)) == .claimed)
            try await store.releaseIdempotencyKey(appID: app.id, key: "k")
            #expect(try await store.claimIdempotencyKey(appID: app.id, key: "k", requestHash: "h2", now: fixture.now, ttl: .seconds(60)) == .claimed)

            fixture.clock.advance(by: 61)
            #expect(try await store.claimIdempotencyKey(appID: app.id, key: "k", requestHash: "h3", now: fixture.now, ttl: .seconds(60)) == .claimed)
            #expect(try await store.claimIdempotencyKey(appID: app.id, key: "old", requestHash: "h", now: fixture.now.addingTimeInterval(-120), ttl: .seconds(60)) == .claimed)
            #expect(try await store.purgeExpiredIdempotencyKeys(now: fixture.now) == 1)
        }
    }
}
