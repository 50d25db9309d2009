import Crypto
import Foundation
import Testing

@testable import MarqueeAPNS

@Suite("Which token a connection writes with")
struct APNSConnectionTokenStateTests {
    let key = APNSSigningKey(privateKey: P256.Signing.PrivateKey(), keyID: "ABC123DEFG", teamID: "DEF123GHIJ")
    let start = Date(timeIntervalSince1970: 1_767_225_600)

    func token(_ generation: Int, issuedMinutesAfterStart minutes: Double = 0) throws -> APNSProviderToken {
        try APNSProviderToken(signingKey: key, issuedAt: start.addingTimeInterval(minutes * 60), generation: generation)
    }

    @Test("a fresh connection adopts the cache's token")
    func adoptsFirstToken() throws {
        var state = APNSConnectionTokenState()
        let first = try token(1)
        #expect(state.decide(current: first, now: start) == .write(authorization: first.authorizationValue))
        #expect(state.generation == 1)
    }

    @Test("a rejected token with nothing newer in the cache retires the connection instead of skipping it")
    func rejectedWithoutReplacementRetires() throws {
        // This once answered "no authorization" without draining: dispatch then chose the same
        // connection again at once, forever.
        var state = APNSConnectionTokenState()
        let first = try token(1)
        _ = state.decide(current: first, now: start)
        state.tokenWasRejected(generation: 1)
        #expect(state.decide(current: first, now: start.addingTimeInterval(60)) == .retire)
    }

    @Test("a renewal within 20 minutes of adopting is not taken on the same connection: it keeps its token")
    func keepsTokenWithinTwentyMinutes() throws {
        var state = APNSConnectionTokenState()
        let first = try token(1)
        _ = state.decide(current: first, now: start)
        let second = try token(2, issuedMinutesAfterStart: 10)
        #expect(
            state.decide(current: second, now: start.addingTimeInterval(10 * 60))
                == .write(authorization: first.authorizationValue)
        )
    }

    @Test("a rejected token is replaced on the connection after 20 minutes, and retires it before")
    func rejectedTokenReplacedOrRetired() throws {
        let first = try token(1)
        let second = try token(2, issuedMinutesAfterStart: 11)

        var early = APNSConnectionTokenState()
        _ = early.decide(current: first, now: start)
        early.tokenWasRejected(generation: 1)
        #expect(early.decide(current: second, now: start.addingTimeInterval(11 * 60)) == .retire)

        var late = APNSConnectionTokenState()
        _ = late.decide(current: first, now: start)
        late.tokenWasRejected(generation: 1)
        #expect(
            late.decide(current: second, now: start.addingTimeInterval(21 * 60))
                == .write(authorization: second.authorizationValue)
        )
        #expect(late.generation == 2)
    }

    @Test("a rejection of an older generation does not touch the token in use")
    func staleRejectionIgnored() throws {
        var state = APNSConnectionTokenState()
        let second = try token(2)
        _ = state.decide(current: second, now: start)
        state.tokenWasRejected(generation: 1)
        #expect(state.decide(current: second, now: start) == .write(authorization: second.authorizationValue))
    }
}
