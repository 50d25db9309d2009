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
        let clock = ManualWallClock(Self.windowStart)
        let cache = APNSProviderTokenCache(signingKey: key, clock: clock)
        let token = try cache.currentToken()
        let parts = token.jwt.split(separator: ".").map(String.init)
        #expect(parts.count == 3)
        #expect(
            String(decoding: try #require(Base64URL.decode(parts[0])), as: UTF8.self)
                == #"{"alg":"ES256","kid":"ABC123DEFG"}"#
        )
        #expect(
            String(decoding: try #require(Base64URL.decode(parts[1])), as: UTF8.self)
                == #"{"iss":"DEF123GHIJ","iat":1767225000}"#
        )
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: try #require(Base64URL.decode(parts[2])))
        #expect(key.publicKey.isValidSignature(signature, for: Data((parts[0] + "." + parts[1]).utf8)))
        #expect(token.authorizationValue.hasPrefix("bearer "))
        #expect(!String(describing: token).contains(parts[2]))
    }

    /// 2025-12-31 23:50:00 UTC, a multiple of 50 minutes since 1970: where a default token window starts.
    static let windowStart = Date(timeIntervalSince1970: 1_767_225_000)

    @Test("one token is shared through its window and renewed at the next; windows are clamped to 20...59 minutes")
    func renewal() throws {
        let clock = ManualWallClock(Self.windowStart)
        let cache = APNSProviderTokenCache(signingKey: key, clock: clock)
        let first = try cache.currentToken()
        #expect(first.issuedAt == Self.windowStart)
        clock.advance(by: 49 * 60 + 59)
        #expect(try cache.currentToken().generation == first.generation)
        clock.advance(by: 1)
        let second = try cache.currentToken()
        #expect(second.generation == first.generation + 1)
        #expect(second.issuedAt == clock.now)

        let eager = APNSProviderTokenCache(signingKey: key, clock: clock, renewalAge: 60)
        let early = try eager.currentToken()
        clock.advance(by: 19 * 60)
        #expect(try eager.currentToken().generation == early.generation)
    }

    @Test("a token's iat is the start of its window, so it is never older than the window when used")
    func alignedIssuedAt() throws {
        let clock = ManualWallClock(Self.windowStart.addingTimeInterval(37 * 60 + 12.5))
        let cache = APNSProviderTokenCache(signingKey: key, clock: clock)
        let token = try cache.currentToken()
        #expect(token.issuedAt == Self.windowStart)
        #expect(cache.nextRenewal(after: clock.now) == Self.windowStart.addingTimeInterval(50 * 60))
        #expect(token.age(at: clock.now) < APNSProviderTokenCache.maximumTokenAge - 5 * 60)
    }

    /// N replicas signing for one key must not show APNs N new tokens per window: each would count
    /// as a token update for the key (`apns-reference.md` §6a).
    @Test("two caches for the same key, started minutes apart, present the same iat and renew at the same moment")
    func replicasAgree() throws {
        let clock = ManualWallClock(Self.windowStart.addingTimeInterval(12 * 60))
        let first = APNSProviderTokenCache(signingKey: key, clock: clock)
        let firstToken = try first.currentToken()
        clock.advance(by: 23 * 60 + 41)
        let second = APNSProviderTokenCache(signingKey: key, clock: clock)
        let secondToken = try second.currentToken()
        #expect(secondToken.issuedAt == firstToken.issuedAt)
        #expect(claims(of: secondToken) == claims(of: firstToken))
        #expect(first.nextRenewal(after: clock.now) == second.nextRenewal(after: clock.now))

        // A second before the window ends both keep their token; at its end both renew, to one iat.
        clock.set(to: first.nextRenewal(after: clock.now).addingTimeInterval(-1))
        #expect(try first.currentToken().generation == firstToken.generation)
        #expect(try second.currentToken().generation == secondToken.generation)
        clock.advance(by: 1)
        let firstRenewed = try first.currentToken()
        let secondRenewed = try second.currentToken()
        #expect(firstRenewed.generation == firstToken.generation + 1)
        #expect(secondRenewed.generation == secondToken.generation + 1)
        #expect(firstRenewed.issuedAt == clock.now)
        #expect(secondRenewed.issuedAt == firstRenewed.issuedAt)
        #expect(claims(of: secondRenewed) == claims(of: firstRenewed))
    }

    /// The header and claims of a token: what APNs compares. Signatures differ, ECDSA being randomised.
    private func claims(of token: APNSProviderToken) -> String {
        token.jwt.split(separator: ".").prefix(2).joined(separator: ".")
    }

    @Test("a rejected token is renewed once, however many connections report it, and realigns at the next window")
    func forcedRenewal() throws {
        let clock = ManualWallClock(Self.windowStart.addingTimeInterval(10 * 60))
        let cache = APNSProviderTokenCache(signingKey: key, clock: clock)
        let rejected = try cache.currentToken()
        let renewed = try cache.renew(rejectedGeneration: rejected.generation)
        let again = try cache.renew(rejectedGeneration: rejected.generation)
        #expect(renewed.generation == rejected.generation + 1)
        #expect(again.generation == renewed.generation)
        // Signing the window's iat again would repeat the refused claims: the new token is issued now.
        #expect(renewed.issuedAt == clock.now)
        #expect(try cache.currentToken().generation == renewed.generation)
        clock.set(to: cache.nextRenewal(after: clock.now))
        #expect(try cache.currentToken().issuedAt == clock.now)
    }
}
