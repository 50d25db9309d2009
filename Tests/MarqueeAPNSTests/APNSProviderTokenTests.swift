import Crypto
import Foundation
import MarqueeCore
import Testing

@testable import MarqueeAPNS

@Suite("Provider tokens")
struct APNSProviderTokenTests {
    let key = APNSSigningKey(privateKey: P256.Signing.PrivateKey(), keyID: "ABC123DEFG", teamID: "DEF123GHIJ")

    @Test("a .p8 key loads from PKCS#8 PEM; anything else fails without quoting it")
    func loadsKeys() throws {
        let pem = P256.Signing.PrivateKey().pemRepresentation
        #expect(pem.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        let loaded = try APNSSigningKey(pemRepresentation: pem, keyID: "ABC123DEFG", teamID: "DEF123GHIJ")
        #expect(loaded.keyID == "ABC123DEFG")
        #expect(!String(describing: loaded).contains("PRIVATE"))
        #expect(throws: APNSSigningKeyError.unreadableKey) {
            try APNSSigningKey(pemRepresentation: "-----BEGIN PRIVATE KEY-----\nnot a key\n", keyID: "A", teamID: "B")
        }
    }

    @Test("the JWT is ES256 with only alg/kid and iss/iat, and its signature verifies")
    func jwtShape() throws {
        let clock = ManualWallClock()
        let cache = APNSProviderTokenCache(signingKey: key, clock: clock)
        let token = try cache.currentToken()
        let parts = token.jwt.split(separator: ".").map(String.init)
        #expect(parts.count == 3)
        #expect(String(decoding: try #require(Base64URL.decode(parts[0])), as: UTF8.self) == #"{"alg":"ES256","kid":"ABC123DEFG"}"#)
        #expect(String(decoding: try #require(Base64URL.decode(parts[1])), as: UTF8.self) == #"{"iss":"DEF123GHIJ","iat":1767225600}"#)
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: try #require(Base64URL.decode(parts[2])))
        #expect(key.publicKey.isValidSignature(signature, for: Data((parts[0] + "." + parts[1]).utf8)))
        #expect(token.authorizationValue.hasPrefix("bearer "))
        #expect(!String(describing: token).contains(parts[2]))
    }

    @Test("one token is shared until the renewal age, then renewed; renewal age is clamped to 20...59 minutes")
    func renewal() throws {
        let clock = ManualWallClock()
        let cache = APNSProviderTokenCache(signingKey: key, clock: clock)
        let first = try cache.currentToken()
        clock.advance(by: 49 * 60)
        #expect(try cache.currentToken().generation == first.generation)
        clock.advance(by: 60)
        let second = try cache.currentToken()
        #expect(second.generation == first.generation + 1)
        #expect(second.issuedAt == clock.now)

        let eager = APNSProviderTokenCache(signingKey: key, clock: clock, renewalAge: 60)
        let early = try eager.currentToken()
        clock.advance(by: 19 * 60)
        #expect(try eager.currentToken().generation == early.generation)
    }

    @Test("a rejected token is renewed once, however many connections report it")
    func forcedRenewal() throws {
        let clock = ManualWallClock()
        let cache = APNSProviderTokenCache(signingKey: key, clock: clock)
        let rejected = try cache.currentToken()
        let renewed = try cache.renew(rejectedGeneration: rejected.generation)
        let again = try cache.renew(rejectedGeneration: rejected.generation)
        #expect(renewed.generation == rejected.generation + 1)
        #expect(again.generation == renewed.generation)
    }
}
