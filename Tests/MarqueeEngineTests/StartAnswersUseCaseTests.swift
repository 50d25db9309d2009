import Foundation
import MarqueeAPNS
import MarqueeCore
import MarqueeStorage
import MarqueeTesting
import Testing

@testable import MarqueeEngine

/// What a start part does with each of APNs' answers: send again later (429, 5xx), up to the
/// attempts allowed, or settle the token at once (a dead token, a refused request).
@Suite("Engine use case: APNs' answers to a start")
struct StartAnswersUseCaseTests {
    @Test("a 429 or a 500 is sent again once its back-off has passed, and the start is accepted once")
    func laterIsSentAgain() async throws {
        let harness = try await EngineHarness()
        try await harness.putEvent("final")
        let throttled = EngineHarness.token(1)
        let failing = EngineHarness.token(2)
        try await harness.register(throttled)
        try await harness.register(failing)
        let fake = harness.apns(.sandbox)
        fake.script(token: throttled, .tooManyRequests)
        fake.script(token: failing, .serverError)
        let view = try await harness.starts.start(app: harness.app, eventKey: "final", request: harness.startRequest())
        try await harness.runStartParts(movingClockUntil: "both tokens are sent again") { fake.pushes.count == 4 }

        #expect(fake.pushCounts == [throttled: 2, failing: 2])
        #expect(fake.pushes.map(\.answer).filter { $0 == .accepted }.count == 2)
        let outcomes = try await harness.outcomes(of: view.job.id, tokens: [throttled, failing])
        #expect(outcomes == [throttled: .accepted, failing: .accepted])
        let job = try await harness.job(view.job.id)
        #expect(job.state == .succeeded)
        #expect(job.progress.succeeded == 2)
        await harness.close()
    }

    @Test("a token APNs keeps answering 500 fails after the attempts allowed, and is not retired")
    func attemptsRunOut() async throws {
        let harness = try await EngineHarness()
        try await harness.putEvent("final")
        let token = EngineHarness.token(1)
        try await harness.register(token)
        let fake = harness.apns(.sandbox)
        fake.script(token: token, .serverError, .serverError, .serverError)
        let view = try await harness.starts.start(app: harness.app, eventKey: "final", request: harness.startRequest())
        try await harness.runStartParts(movingClockUntil: "the third attempt is sent") { fake.pushes.count == 3 }

        #expect(fake.pushCounts == [token: 3])
        #expect(try await harness.outcomes(of: view.job.id, tokens: [token]) == [token: .failed])
        let failures = try await harness.deliveries(of: view.job.id).filter { $0.outcome == .failed }
        #expect(failures.map(\.status) == [500])
        #expect(failures.map(\.reason) == [.internalServerError])
        #expect(try await harness.storedToken(token).invalidatedAt == nil)
        await harness.close()
    }

    @Test("a dead token without a 410's timestamp and a refused request are settled at once, retiring nothing")
    func settledAtOnce() async throws {
        let harness = try await EngineHarness()
        try await harness.putEvent("final")
        let badToken = EngineHarness.token(1)
        let refused = EngineHarness.token(2)
        try await harness.register(badToken)
        try await harness.register(refused)
        let fake = harness.apns(.sandbox)
        fake.script(token: badToken, .rejected(status: 400, reason: .badDeviceToken))
        fake.script(token: refused, .rejected(status: 403, reason: .topicDisallowed))
        let view = try await harness.starts.start(app: harness.app, eventKey: "final", request: harness.startRequest())
        try await harness.runStartParts()

        #expect(fake.pushCounts == [badToken: 1, refused: 1])
        let outcomes = try await harness.outcomes(of: view.job.id, tokens: [badToken, refused])
        #expect(outcomes == [badToken: .tokenInvalid, refused: .rejected])
        #expect(try await harness.storedToken(badToken).invalidatedAt == nil)
        #expect(try await harness.storedToken(refused).invalidatedAt == nil)
        let job = try await harness.job(view.job.id)
        #expect(job.state == .succeeded)
        #expect(job.progress.succeeded == 0)
        await harness.close()
    }
}
