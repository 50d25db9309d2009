import Foundation
import MarqueeCore
import Testing

@testable import MarqueeEngine

/// What authentication remembers, and for how long, without a store.
@Suite("Credential cache")
struct CredentialCacheTests {
    let clock = ManualWallClock()

    func caller(appID: AppID? = AppID()) -> AuthenticatedCaller {
        let key = APIKey(
            appID: appID,
            role: .publisher,
            prefix: "abc",
            secretHash: [1, 2, 3],
            label: "",
            createdAt: clock.now
        )
        let app = appID.map {
            App(
                id: $0,
                name: "A",
                bundleID: "com.example.a",
                teamID: "TEAM123456",
                environments: [.sandbox],
                createdAt: clock.now
            )
        }
        return AuthenticatedCaller(key: key, app: app)
    }

    @Test("a key is answered from memory for its lifetime, then read again")
    func lifetime() {
        let cache = CredentialCache(lifetime: .seconds(5), clock: clock)
        let remembered = caller()
        cache.remember(remembered, forKeyHash: [1], readAt: cache.generation)
        clock.advance(by: 4.9)
        #expect(cache.caller(forKeyHash: [1]) == remembered)
        #expect(cache.caller(forKeyHash: [2]) == nil)
        clock.advance(by: 0.1)
        #expect(cache.caller(forKeyHash: [1]) == nil)
        #expect(cache.count == 0)
    }

    @Test("a lifetime of zero remembers nothing")
    func disabled() {
        let cache = CredentialCache(lifetime: .zero, clock: clock)
        cache.remember(caller(), forKeyHash: [1], readAt: cache.generation)
        #expect(cache.caller(forKeyHash: [1]) == nil)
        #expect(cache.count == 0)
    }

    @Test("revoking a key forgets it; changing an app forgets all its keys and no other app's")
    func forgetting() {
        let cache = CredentialCache(lifetime: .seconds(5), clock: clock)
        let appID = AppID()
        let first = caller(appID: appID)
        let second = caller(appID: appID)
        let other = caller()
        cache.remember(first, forKeyHash: [1], readAt: cache.generation)
        cache.remember(second, forKeyHash: [2], readAt: cache.generation)
        cache.remember(other, forKeyHash: [3], readAt: cache.generation)

        cache.forget(keyID: first.key.id)
        #expect(cache.caller(forKeyHash: [1]) == nil)
        #expect(cache.caller(forKeyHash: [2]) == second)

        cache.forget(appID: appID)
        #expect(cache.caller(forKeyHash: [2]) == nil)
        #expect(cache.caller(forKeyHash: [3]) == other)
    }

    @Test("past its capacity the expired keys go first, then the soonest to expire")
    func capacity() {
        let cache = CredentialCache(lifetime: .seconds(5), capacity: 2, clock: clock)
        cache.remember(caller(), forKeyHash: [1], readAt: cache.generation)
        clock.advance(by: 1)
        cache.remember(caller(), forKeyHash: [2], readAt: cache.generation)
        clock.advance(by: 1)
        cache.remember(caller(), forKeyHash: [3], readAt: cache.generation)
        #expect(cache.count == 2)
        #expect(cache.caller(forKeyHash: [1]) == nil)
        #expect(cache.caller(forKeyHash: [2]) != nil)
        #expect(cache.caller(forKeyHash: [3]) != nil)

        clock.advance(by: 4.5)  // [2] has expired, [3] has not
        cache.remember(caller(), forKeyHash: [4], readAt: cache.generation)
        #expect(cache.caller(forKeyHash: [3]) != nil)
        #expect(cache.caller(forKeyHash: [4]) != nil)
    }

    @Test("a read that began before a forgetting is not kept: it may have seen a key before its revocation")
    func raceWithForgetting() {
        let cache = CredentialCache(lifetime: .seconds(5), clock: clock)
        let read = cache.generation
        cache.forgetAll()  // another replica revoked a key while this one read it
        cache.remember(caller(), forKeyHash: [1], readAt: read)
        #expect(cache.caller(forKeyHash: [1]) == nil)
        cache.remember(caller(), forKeyHash: [1], readAt: cache.generation)
        #expect(cache.caller(forKeyHash: [1]) != nil)
    }

    @Test("suspended, the cache forgets everything and keeps nothing until it hears of changes again")
    func suspension() {
        let cache = CredentialCache(lifetime: .seconds(5), clock: clock)
        cache.remember(caller(), forKeyHash: [1], readAt: cache.generation)
        cache.suspend()
        #expect(cache.count == 0)
        cache.remember(caller(), forKeyHash: [2], readAt: cache.generation)
        #expect(cache.caller(forKeyHash: [2]) == nil)
        cache.forgetAll()
        cache.remember(caller(), forKeyHash: [2], readAt: cache.generation)
        #expect(cache.caller(forKeyHash: [2]) != nil)
    }
}
