import Foundation
import MarqueeCore
import MarqueeStorage
import MarqueeTesting
import Testing

@testable import MarqueeEngine

/// Keeping push-to-start and update tokens current: what a registration takes and refuses, a
/// device whose token rotates, the 410 timestamp rule, activities' update tokens, and each app's
/// tokens apart from every other app's.
@Suite("Engine use case: token registry")
struct TokenRegistryUseCaseTests {
    func registration(
        _ token: String,
        environment: APNSEnvironment = .sandbox,
        deviceID: String? = nil,
        tags: [String] = []
    ) -> PushToStartRegistration {
        PushToStartRegistration(
            environment: environment,
            attributesType: EngineHarness.attributesType,
            token: token,
            deviceID: deviceID,
            tags: tags,
            iosVersion: "18.2"
        )
    }

    /// The field pointers of an `invalidInput` refusal, or `nil` for any other outcome.
    func refusedFields(_ work: () async throws -> Void) async -> [String]? {
        do {
            try await work()
            return nil
        } catch EngineError.invalidInput(let errors) {
            return errors.map(\.pointer)
        } catch {
            return nil
        }
    }

    @Test("a token is stored lowercased with what the device said, and a registration again refreshes it")
    func registerAndRefresh() async throws {
        let harness = try await EngineHarness()
        let token = EngineHarness.token(1)
        let first = registration(token.uppercased(), tags: ["lyon"])
        #expect(try await harness.tokens.register(app: harness.app, [first], pointerPrefix: "") == 1)
        let stored = try await harness.storedToken(token)
        #expect(stored.token == token)
        #expect(stored.tags == ["lyon"])
        #expect(stored.iosVersion == "18.2")

        harness.clock.advance(by: 3600)
        _ = try await harness.tokens.register(
            app: harness.app,
            [registration(token, tags: ["paris"])],
            pointerPrefix: ""
        )
        let refreshed = try await harness.storedToken(token)
        #expect(refreshed.rowID == stored.rowID)
        #expect(refreshed.tags == ["paris"])
        #expect(refreshed.firstRegisteredAt == stored.firstRegisteredAt)
        #expect(refreshed.lastRegisteredAt > stored.lastRegisteredAt)
        await harness.close()
    }

    @Test("a batch with one bad registration is refused whole, naming each bad field, and writes nothing")
    func badBatchWritesNothing() async throws {
        let harness = try await EngineHarness(environments: [.sandbox])
        let good = registration(EngineHarness.token(1))
        let notHex = registration("not-a-token")
        let otherEnvironment = registration(EngineHarness.token(2), environment: .production)
        let fields = await refusedFields {
            _ = try await harness.tokens.register(
                app: harness.app,
                [good, notHex, otherEnvironment],
                pointerPrefix: "/tokens"
            )
        }
        #expect(fields == ["/tokens/1/token", "/tokens/2/environment"])
        await #expect(throws: EngineError.self) { _ = try await harness.storedToken(EngineHarness.token(1)) }

        let empty = await refusedFields {
            _ = try await harness.tokens.register(app: harness.app, [], pointerPrefix: "")
        }
        #expect(empty == [""])
        await harness.close()
    }

    @Test("a batch over the registry's bound is refused before anything is read")
    func batchBound() async throws {
        let harness = try await EngineHarness()
        let bound = harness.configuration.maximumTokenBatch
        let tooMany = (0...bound).map { registration(EngineHarness.token($0)) }
        let fields = await refusedFields {
            _ = try await harness.tokens.register(app: harness.app, tooMany, pointerPrefix: "/tokens")
        }
        #expect(fields == ["/tokens"])
        await harness.close()
    }

    @Test("a device that registers a new token keeps its row: the old token is gone, the device's history stays")
    func deviceRotation() async throws {
        let harness = try await EngineHarness()
        let old = EngineHarness.token(1)
        let new = EngineHarness.token(2)
        _ = try await harness.tokens.register(
            app: harness.app,
            [registration(old, deviceID: "iphone-7")],
            pointerPrefix: ""
        )
        let before = try await harness.storedToken(old)

        harness.clock.advance(by: 60)
        _ = try await harness.tokens.register(
            app: harness.app,
            [registration(new, deviceID: "iphone-7")],
            pointerPrefix: ""
        )
        let after = try await harness.storedToken(new)
        #expect(after.rowID == before.rowID)
        #expect(after.deviceID == "iphone-7")
        await #expect(throws: EngineError.self) { _ = try await harness.storedToken(old) }
        await harness.close()
    }

    @Test("a 410 retires a token only if APNs saw it invalid after its last registration")
    func goneTimestampRule() async throws {
        let harness = try await EngineHarness()
        let token = EngineHarness.token(1)
        try await harness.register(token)
        let row = try await harness.storedToken(token).rowID
        let registeredAt = harness.clock.now

        let before = Int64(registeredAt.addingTimeInterval(-60).timeIntervalSince1970 * 1000)
        let stale = TokenInvalidation(reason: .unregistered, apnsTimestampMilliseconds: before)
        #expect(try await harness.tokens.recordInvalidation(app: harness.app, tokenRowID: row, stale) == false)
        #expect(try await harness.storedToken(token).invalidatedAt == nil)

        let after = Int64(registeredAt.addingTimeInterval(60).timeIntervalSince1970 * 1000)
        let fresh = TokenInvalidation(reason: .unregistered, apnsTimestampMilliseconds: after)
        #expect(try await harness.tokens.recordInvalidation(app: harness.app, tokenRowID: row, fresh))
        let retired = try await harness.storedToken(token)
        #expect(retired.invalidatedAt != nil)
        #expect(retired.invalidationReason == .unregistered)
        await harness.close()
    }

    @Test("an unregistered token is gone; unregistering one the app does not have is not found")
    func unregister() async throws {
        let harness = try await EngineHarness()
        let token = EngineHarness.token(1)
        try await harness.register(token)
        try await harness.tokens.unregister(
            app: harness.app,
            environment: .sandbox,
            attributesType: EngineHarness.attributesType,
            token: token.uppercased()
        )
        await #expect(throws: EngineError.self) { _ = try await harness.storedToken(token) }
        await #expect(throws: EngineError.self) {
            try await harness.tokens.unregister(
                app: harness.app,
                environment: .sandbox,
                attributesType: EngineHarness.attributesType,
                token: token
            )
        }
        await harness.close()
    }

    @Test("an activity's update token: recorded, replaced by the next one, and the activity ended")
    func updateTokens() async throws {
        let harness = try await EngineHarness()
        let view = try await harness.putEvent("final")
        let first = EngineHarness.token(10)
        let second = EngineHarness.token(11)
        let recorded = try await harness.tokens.putUpdateToken(
            app: harness.app,
            activityID: "activity-1",
            event: view.event,
            environment: .sandbox,
            token: first.uppercased()
        )
        #expect(recorded.currentUpdateToken == first)
        #expect(recorded.state == .active)

        harness.clock.advance(by: 30)
        let replaced = try await harness.tokens.putUpdateToken(
            app: harness.app,
            activityID: "activity-1",
            event: view.event,
            environment: .sandbox,
            token: second
        )
        #expect(replaced.id == recorded.id)
        #expect(replaced.currentUpdateToken == second)

        try await harness.tokens.unregisterActivity(app: harness.app, activityID: "activity-1")
        #expect(try await harness.tokens.activity(app: harness.app, activityID: "activity-1").state == .ended)
        await harness.close()
    }

    @Test("an update token for another event's activity, or an environment the event lacks, is refused")
    func updateTokenRefusals() async throws {
        let harness = try await EngineHarness()
        let final = try await harness.putEvent("final")
        let semi = try await harness.putEvent("semi", environments: [.sandbox])
        let token = EngineHarness.token(10)
        _ = try await harness.tokens.putUpdateToken(
            app: harness.app,
            activityID: "activity-1",
            event: final.event,
            environment: .sandbox,
            token: token
        )
        await #expect(throws: EngineError.conflict("activity activity-1 belongs to another event or environment")) {
            _ = try await harness.tokens.putUpdateToken(
                app: harness.app,
                activityID: "activity-1",
                event: semi.event,
                environment: .sandbox,
                token: token
            )
        }
        let fields = await refusedFields {
            _ = try await harness.tokens.putUpdateToken(
                app: harness.app,
                activityID: "activity-2",
                event: semi.event,
                environment: .production,
                token: "zz"
            )
        }
        #expect(fields == ["/environment", "/token"])
        await harness.close()
    }

    @Test("one token in two apps is two rows: one app's unregistering, 410 and activities never reach the other")
    func appsApart() async throws {
        let harness = try await EngineHarness()
        let racing = try await harness.otherApp()
        let token = EngineHarness.token(1)
        try await harness.register(token)
        _ = try await harness.tokens.register(app: racing, [registration(token)], pointerPrefix: "")
        let theirs = {
            try await harness.tokens.token(
                app: racing,
                environment: .sandbox,
                attributesType: EngineHarness.attributesType,
                token: token
            )
        }
        let ours = try await harness.storedToken(token)
        #expect(try await theirs().rowID != ours.rowID)

        let fresh = TokenInvalidation(
            reason: .unregistered,
            apnsTimestampMilliseconds: Int64(harness.clock.now.addingTimeInterval(60).timeIntervalSince1970 * 1000)
        )
        #expect(try await harness.tokens.recordInvalidation(app: racing, tokenRowID: ours.rowID, fresh) == false)
        #expect(try await harness.storedToken(token).invalidatedAt == nil)

        try await harness.tokens.unregister(
            app: harness.app,
            environment: .sandbox,
            attributesType: EngineHarness.attributesType,
            token: token
        )
        #expect(try await theirs().invalidatedAt == nil)

        let view = try await harness.putEvent("final")
        _ = try await harness.tokens.putUpdateToken(
            app: harness.app,
            activityID: "activity-1",
            event: view.event,
            environment: .sandbox,
            token: EngineHarness.token(10)
        )
        await #expect(throws: EngineError.notFound(resource: "activity", id: "activity-1")) {
            _ = try await harness.tokens.activity(app: racing, activityID: "activity-1")
        }
        await harness.close()
    }
}
