import Foundation
import MarqueeCore
import MarqueeStorage
import Testing

/// `registerPushToStartTokens`: a device's registration as the service takes it, the upsert and the
/// late-join hook as one unit, with the rows as written when asked for.
@Suite("Token registration")
struct TokenRegistrationContractTests {
    @Test(
        "a registration writes the tokens and queues the late joiners among them, once, in one call",
        arguments: Backend.allCases
    )
    func writesAndQueues(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let store = fixture.store
            let app = try await fixture.makeApp()
            let event = try await fixture.makeEvent(for: app)
            _ = try await store.setEventState(appID: app.id, id: event.id, state: .live, at: fixture.now)
            try await store.recordLateJoinOffer(
                PendingStartContractTests.offer(event, tags: ["arsenal"], at: fixture.now)
            )
            let registrations = (0..<6).map {
                TokenContractTests.registration($0, tags: $0 < 3 ? ["arsenal"] : ["chelsea"])
            }

            let first = try await store.registerPushToStartTokens(
                appID: app.id,
                registrations,
                at: fixture.now,
                returningTokens: false
            )
            #expect(first == TokenRegistrationOutcome(written: 6, lateJoinersQueued: 3))
            // A refresh writes again and queues nothing twice.
            fixture.clock.advance(by: 60)
            let again = try await store.registerPushToStartTokens(
                appID: app.id,
                registrations,
                at: fixture.now,
                returningTokens: false
            )
            #expect(again == TokenRegistrationOutcome(written: 6, lateJoinersQueued: 0))
            #expect(try await store.pendingStartCount(appID: app.id, eventID: event.id, environment: .sandbox) == 3)
            let refreshed = try #require(
                try await store.pushToStartToken(
                    appID: app.id,
                    environment: .sandbox,
                    attributesType: "MatchAttributes",
                    token: registrations[4].token
                )
            )
            #expect(refreshed.lastRegisteredAt == fixture.now && refreshed.tags == ["chelsea"])
        }
    }

    @Test("a single registration answers its row as written, the same as a read of it", arguments: Backend.allCases)
    func answersRow(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let store = fixture.store
            let app = try await fixture.makeApp()
            let registration = TokenContractTests.registration(7, tags: ["vip"])
            let outcome = try await store.registerPushToStartTokens(
                appID: app.id,
                [registration],
                at: fixture.now,
                returningTokens: true
            )
            let answered = try #require(outcome.tokens.first)
            #expect(outcome.written == 1 && outcome.tokens.count == 1 && outcome.lateJoinersQueued == 0)
            let read = try await store.pushToStartToken(
                appID: app.id,
                environment: .sandbox,
                attributesType: "MatchAttributes",
                token: registration.token
            )
            #expect(answered == read)
            #expect(
                answered.tags == ["vip"] && answered.deviceID == "device-7" && answered.lastRegisteredAt == fixture.now
            )
        }
    }

    @Test(
        "a batch with a rotated device and new ones: the device keeps its row under its new token, each queued once",
        arguments: Backend.allCases
    )
    func rotationInBatch(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let store = fixture.store
            let app = try await fixture.makeApp()
            let event = try await fixture.makeEvent(for: app)
            let registered = try await store.registerPushToStartTokens(
                appID: app.id,
                [DeviceContractTests.registration(token: 1, device: 1)],
                at: fixture.now,
                returningTokens: true
            )
            let deviceRow = try #require(registered.tokens.first).rowID
            _ = try await store.setEventState(appID: app.id, id: event.id, state: .live, at: fixture.now)
            try await store.recordLateJoinOffer(PendingStartContractTests.offer(event, at: fixture.now))

            fixture.clock.advance(by: 60)
            let outcome = try await store.registerPushToStartTokens(
                appID: app.id,
                [
                    DeviceContractTests.registration(token: 100, device: 1),
                    DeviceContractTests.registration(token: 2, device: 2),
                    DeviceContractTests.registration(token: 3, device: nil),
                ],
                at: fixture.now,
                returningTokens: true
            )
            #expect(outcome.written == 3 && outcome.lateJoinersQueued == 3)
            let rotated = try #require(outcome.tokens.first { $0.deviceID == "device-1" })
            #expect(rotated.rowID == deviceRow && rotated.token == DeviceContractTests.token(100))
            #expect(
                try await store.pushToStartToken(
                    appID: app.id,
                    environment: .sandbox,
                    attributesType: "MatchAttributes",
                    token: DeviceContractTests.token(1)
                ) == nil
            )
            #expect(try await store.pendingStartCount(appID: app.id, eventID: event.id, environment: .sandbox) == 3)
        }
    }

    @Test("a registration for an app that does not exist is the app's notFound", arguments: Backend.allCases)
    func unknownApp(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let missing = AppID()
            for returningTokens in [false, true] {
                await #expect(throws: StoreError.notFound(entity: "app", id: missing.description)) {
                    try await fixture.store.registerPushToStartTokens(
                        appID: missing,
                        [TokenContractTests.registration(1), TokenContractTests.registration(2)],
                        at: fixture.now,
                        returningTokens: returningTokens
                    )
                }
            }
        }
    }
}
