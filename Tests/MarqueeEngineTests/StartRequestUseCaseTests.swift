import Foundation
import MarqueeAPNS
import MarqueeCore
import MarqueeStorage
import MarqueeTesting
import Testing

@testable import MarqueeEngine

/// What a start request names and what it is refused for, before anything is sent: the audience's
/// tags, users and tokens, its size asked beforehand, and events or environments it cannot go to.
@Suite("Engine use case: start requests")
struct StartRequestUseCaseTests {
    /// Five devices: two tagged `vip` (one of them user `ana`), one of user `ben`, two plain.
    func registerCrowd(_ harness: EngineHarness) async throws {
        try await harness.register(EngineHarness.token(1), tags: ["vip"])
        try await harness.register(EngineHarness.token(2), userID: "ana", tags: ["vip", "home"])
        try await harness.register(EngineHarness.token(3), userID: "ben")
        try await harness.register(EngineHarness.token(4))
        try await harness.register(EngineHarness.token(5))
    }

    func sentTo(_ harness: EngineHarness, audience: StartAudience, key: String) async throws -> Set<String> {
        try await harness.putEvent(key)
        let before = harness.apns(.sandbox).pushes.count
        let request = harness.startRequest(audience: audience)
        let size = try await harness.starts.audienceSize(
            app: harness.app,
            eventKey: key,
            environment: .sandbox,
            audience: audience
        )
        let view = try await harness.starts.start(app: harness.app, eventKey: key, request: request)
        #expect(view.total == size.count)
        #expect(size.attributesType == EngineHarness.attributesType)
        try await harness.runStartParts()
        return Set(harness.apns(.sandbox).pushes[before...].map(\.token))
    }

    @Test("an audience of tags, users or tokens reaches exactly those devices, and its size is known beforehand")
    func audienceLists() async throws {
        let harness = try await EngineHarness()
        try await registerCrowd(harness)
        let token = EngineHarness.token

        #expect(try await sentTo(harness, audience: StartAudience(tags: ["vip"]), key: "tags") == [token(1), token(2)])
        #expect(try await sentTo(harness, audience: StartAudience(userIDs: ["ben"]), key: "users") == [token(3)])
        let listed = StartAudience(tokens: [token(4).uppercased(), token(5)])
        #expect(try await sentTo(harness, audience: listed, key: "tokens") == [token(4), token(5)])
        #expect(try await sentTo(harness, audience: StartAudience(), key: "everyone") == Set((1...5).map(token)))
        await harness.close()
    }

    @Test("a start is refused for an unknown event, an environment the event lacks, a closed event, a token not hex")
    func refusals() async throws {
        let harness = try await EngineHarness()
        try await harness.putEvent("production-only", environments: [.production])
        try await harness.putEvent("closing")
        _ = try await harness.events.close(app: harness.app, key: "closing")
        let starts = harness.starts

        await #expect(throws: EngineError.self) {
            try await starts.start(app: harness.app, eventKey: "unknown", request: harness.startRequest())
        }
        await #expect(throws: EngineError.self) {
            try await starts.start(app: harness.app, eventKey: "production-only", request: harness.startRequest())
        }
        await #expect(throws: EngineError.self) {
            try await starts.start(app: harness.app, eventKey: "closing", request: harness.startRequest())
        }
        try await harness.putEvent("final")
        let notHex = harness.startRequest(audience: StartAudience(tokens: ["not-a-token"]))
        await #expect(throws: EngineError.self) {
            try await starts.start(app: harness.app, eventKey: "final", request: notHex)
        }
        #expect(try await harness.store.jobs(appID: harness.app.id, kinds: nil, before: nil, limit: 10).isEmpty)
        await harness.close()
    }

    @Test("a retired token registered again is back in the audience; one opted out is not")
    func registeredAgain() async throws {
        let harness = try await EngineHarness()
        try await harness.putEvent("final")
        let returning = EngineHarness.token(1)
        let leaving = EngineHarness.token(2)
        try await harness.register(returning)
        try await harness.register(leaving)
        let invalidSince = Int64(harness.clock.now.addingTimeInterval(60).timeIntervalSince1970 * 1000)
        let invalidation = TokenInvalidation(reason: .unregistered, apnsTimestampMilliseconds: invalidSince)
        let row = try await harness.storedToken(returning).rowID
        #expect(try await harness.tokens.recordInvalidation(app: harness.app, tokenRowID: row, invalidation))
        try await harness.tokens.unregister(
            app: harness.app,
            environment: .sandbox,
            attributesType: EngineHarness.attributesType,
            token: leaving
        )
        let none = try await harness.starts.audienceSize(
            app: harness.app,
            eventKey: "final",
            environment: .sandbox,
            audience: StartAudience()
        )
        #expect(none.count == 0)

        harness.clock.advance(by: 120)
        try await harness.register(returning)
        #expect(try await harness.storedToken(returning).invalidatedAt == nil)
        _ = try await harness.starts.start(app: harness.app, eventKey: "final", request: harness.startRequest())
        try await harness.runStartParts()
        #expect(harness.apns(.sandbox).pushCounts == [returning: 1])
        await harness.close()
    }

    @Test("a start asked again with the same job ID answers the job there is and enqueues nothing more")
    func sameJobIDOnce() async throws {
        let harness = try await EngineHarness()
        try await harness.putEvent("final")
        try await harness.register(EngineHarness.token(1))
        let jobID = JobID()
        let request = harness.startRequest()
        let first = try await harness.starts.start(app: harness.app, eventKey: "final", request: request, jobID: jobID)
        let again = try await harness.starts.start(app: harness.app, eventKey: "final", request: request, jobID: jobID)
        #expect(again.job.id == first.job.id)
        #expect(try await harness.store.childJobs(appID: harness.app.id, parentID: jobID).count == 1)
        try await harness.runStartParts()
        #expect(harness.apns(.sandbox).pushCounts == [EngineHarness.token(1): 1])
        await harness.close()
    }
}
