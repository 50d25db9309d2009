import Foundation
import MarqueeAPNS
import MarqueeCore
import MarqueeStorage
import MarqueeTesting
import Testing

@testable import MarqueeEngine

/// Starting an event's Live Activity, as the engine does it: who is in the audience, the start
/// ledger (each device once, whatever runs again), uncertain starts, and what a 410 retires.
@Suite("Engine use case: start")
struct StartUseCaseTests {
    @Test(
        "the audience is the environment's valid tokens of the event's attributes type, less opted-out and retired ones"
    )
    func audienceSelection() async throws {
        let harness = try await EngineHarness()
        try await harness.putEvent("final")
        let chosen = EngineHarness.token(1)
        let otherType = EngineHarness.token(2)
        let production = EngineHarness.token(3)
        let optedOut = EngineHarness.token(4)
        let retired = EngineHarness.token(5)
        try await harness.register(chosen)
        try await harness.register(otherType, attributesType: "OtherAttributes")
        try await harness.register(production, environment: .production)
        try await harness.register(optedOut)
        try await harness.register(retired)
        try await harness.tokens.unregister(
            app: harness.app,
            environment: .sandbox,
            attributesType: EngineHarness.attributesType,
            token: optedOut
        )
        let retiredRow = try await harness.storedToken(retired).rowID
        let invalidSince = Int64(harness.clock.now.addingTimeInterval(60).timeIntervalSince1970 * 1000)
        let invalidation = TokenInvalidation(reason: .unregistered, apnsTimestampMilliseconds: invalidSince)
        #expect(try await harness.tokens.recordInvalidation(app: harness.app, tokenRowID: retiredRow, invalidation))

        let view = try await harness.starts.start(app: harness.app, eventKey: "final", request: harness.startRequest())
        #expect(view.total == 1)
        try await harness.runStartParts()

        #expect(harness.apns(.sandbox).pushCounts == [chosen: 1])
        #expect(harness.apns(.production).pushes.isEmpty)
        #expect(try await harness.job(view.job.id).state == .succeeded)
        await harness.close()
    }

    @Test("a start sends each token once; a second start of the event sends only to tokens not started")
    func ledgerSendsOnce() async throws {
        let harness = try await EngineHarness()
        let first = try await harness.enqueuedStart(devices: 3)
        try await harness.runStartParts()
        #expect(try await harness.job(first.job).progress.succeeded == 3)

        try await harness.register(EngineHarness.token(4))
        let second = try await harness.starts.start(
            app: harness.app,
            eventKey: "final",
            request: harness.startRequest()
        )
        #expect(second.total == 1)
        try await harness.runStartParts()

        let counts = harness.apns(.sandbox).pushCounts
        #expect(counts.count == 4)
        #expect(counts.values.allSatisfy { $0 == 1 }, "\(counts)")
        await harness.close()
    }

    @Test("a part run again after its worker died sends nothing twice: what it had written is uncertain, not resent")
    func rerunAfterCrash() async throws {
        let harness = try await EngineHarness()
        let (jobID, tokens) = try await harness.enqueuedStart(devices: 5)
        let fake = harness.apns(.sandbox)
        fake.holdPushes()
        let part = try #require(try await harness.leaseStartPart(owner: "dying-worker"))
        let handler = harness.startHandler()
        let dying = Task { try await handler.run(part, owner: "dying-worker", stop: RunStop()) }
        try await waitUntil("the first push is written") { fake.heldPushes > 0 }
        dying.cancel()
        _ = await dying.result
        fake.releasePushes()

        // The lease lapses; another worker takes the part over.
        harness.clock.advance(by: harness.runner.configuration.leaseDuration.timeInterval + 1)
        try await harness.runStartParts()

        let counts = fake.pushCounts
        #expect(counts.values.allSatisfy { $0 == 1 }, "\(counts)")
        let outcomes = try await harness.outcomes(of: jobID, tokens: tokens)
        #expect(outcomes.count == 5)
        let uncertain = outcomes.values.filter { $0 == .uncertain }.count
        #expect(uncertain >= 1)
        #expect(outcomes.values.filter { $0 == .accepted }.count + uncertain == 5)
        #expect(try await harness.job(jobID).progress.uncertain == Int64(uncertain))
        await harness.close()
    }

    @Test(
        "a start lost after it was written is recorded uncertain, and resending the uncertain reaches only that device"
    )
    func uncertainRecordedAndResolved() async throws {
        let harness = try await EngineHarness()
        try await harness.putEvent("final")
        let lost = EngineHarness.token(1)
        let answered = EngineHarness.token(2)
        try await harness.register(lost)
        try await harness.register(answered)
        harness.apns(.sandbox).script(token: lost, .lostAfterWrite)
        let view = try await harness.starts.start(app: harness.app, eventKey: "final", request: harness.startRequest())
        try await harness.runStartParts()

        let job = try await harness.job(view.job.id)
        #expect(job.progress.uncertain == 1)
        #expect(job.progress.succeeded == 1)
        #expect(try await harness.outcomes(of: view.job.id, tokens: [lost])[lost] == .uncertain)

        let resend = try await harness.starts.resendUncertain(app: harness.app, id: view.job.id)
        #expect(resend.total == 1)
        try await harness.runStartParts()
        #expect(harness.apns(.sandbox).pushCounts == [lost: 2, answered: 1])
        #expect(try await harness.outcomes(of: resend.job.id, tokens: [lost])[lost] == .accepted)
        #expect(try await harness.job(resend.job.id).state == .succeeded)
        await harness.close()
    }

    @Test("a 410 retires a token only when APNs saw it invalid after its last registration")
    func goneRetiresByTimestamp() async throws {
        let harness = try await EngineHarness()
        try await harness.putEvent("final")
        let goneSince = EngineHarness.token(1)
        let reRegistered = EngineHarness.token(2)
        try await harness.register(goneSince)
        try await harness.register(reRegistered)
        let fake = harness.apns(.sandbox)
        fake.script(token: goneSince, .gone(since: harness.clock.now.addingTimeInterval(60)))
        fake.script(token: reRegistered, .gone(since: harness.clock.now.addingTimeInterval(-3600)))
        let view = try await harness.starts.start(app: harness.app, eventKey: "final", request: harness.startRequest())
        try await harness.runStartParts()

        #expect(try await harness.storedToken(goneSince).invalidatedAt != nil)
        #expect(try await harness.storedToken(reRegistered).invalidatedAt == nil)
        let outcomes = try await harness.outcomes(of: view.job.id, tokens: [goneSince, reRegistered])
        #expect(outcomes[goneSince] == .tokenInvalid)
        #expect(fake.pushCounts == [goneSince: 1, reRegistered: 1])
        await harness.close()
    }

    @Test(
        "iOS 18 devices start on the event's channel, older ones with an update token, and every one when asked"
    )
    func channelOrUpdateToken() async throws {
        let harness = try await EngineHarness()
        let (event, recent, older) = try await harness.startedOnChannelAndUpdateToken()
        let channelID = try #require(event.channels.first { $0.environment == .sandbox }?.apnsChannelID)

        let byToken = Dictionary(uniqueKeysWithValues: harness.apns(.sandbox).pushes.map { ($0.token, $0) })
        #expect(byToken[recent]?.aps["input-push-channel"] as? String == channelID)
        #expect(byToken[recent]?.aps["input-push-token"] == nil)
        #expect(byToken[older]?.aps["input-push-token"] as? Int == 1)
        #expect(byToken[older]?.aps["input-push-channel"] == nil)
        #expect(byToken[recent]?.kind == .start)
        #expect(byToken[recent]?.collapseID != nil)

        try await harness.putEvent("replay")
        _ = try await harness.starts.start(
            app: harness.app,
            eventKey: "replay",
            request: harness.startRequest(inputPushToken: true)
        )
        try await harness.runStartParts()
        let replay = harness.apns(.sandbox).pushes.suffix(2)
        #expect(replay.count == 2)
        #expect(replay.allSatisfy { $0.aps["input-push-token"] as? Int == 1 && $0.aps["input-push-channel"] == nil })
        await harness.close()
    }
}
