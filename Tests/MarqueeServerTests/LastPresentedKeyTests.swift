import MarqueeEngine
import Testing

@testable import MarqueeServer

/// `LastPresentedKey`: a connection's client hashes its key once, and another key is never taken
/// for it.
@Suite("The key a connection last presented")
struct LastPresentedKeyTests {
    let first = APIKeyCredential.generate()
    let second = APIKeyCredential.generate()

    @Test("a key's hash is the credential's, whether it was presented before or not")
    func sameHash() {
        var keys = LastPresentedKey()
        #expect(keys.hash(of: Substring(first.presented)) == first.hash)
        #expect(keys.hash(of: Substring(first.presented)) == first.hash)
    }

    @Test("another key presented on the same connection gets its own hash, and the first its own again")
    func anotherKey() {
        var keys = LastPresentedKey()
        #expect(keys.hash(of: Substring(first.presented)) == first.hash)
        #expect(keys.hash(of: Substring(second.presented)) == second.hash)
        #expect(keys.hash(of: Substring(first.presented)) == first.hash)
    }

    @Test("text not shaped like a key has no hash, and leaves the remembered key as it was")
    func notAKey() {
        var keys = LastPresentedKey()
        #expect(keys.hash(of: Substring(first.presented)) == first.hash)
        #expect(keys.hash(of: "not-a-key") == nil)
        #expect(keys.hash(of: Substring(first.presented.dropLast())) != first.hash)
        #expect(keys.hash(of: Substring(first.presented)) == first.hash)
    }
}
