import Foundation
import MarqueeCore
import MarqueeStorage
import Testing

@Suite("Push-to-start tokens")
struct TokenContractTests {
    static func registration(
        _ index: Int,
        tags: [String] = [],
        environment: APNSEnvironment = .sandbox
    ) -> PushToStartRegistration {
        PushToStartRegistration(
            environment: environment,
            attributesType: "MatchAttributes",
            token: String(format: "%064x", index),
            deviceID: "device-\(index)",
            userID: index.isMultiple(of: 2) ? "user-\(index)" : nil,
            tags: tags,
            iosVersion: index.isMultiple(of: 3) ? "17.5" : "18.2",
            frequentPushesEnabled: index.isMultiple(of: 2)
        )
    }

    @Test("a bulk upsert inserts new tokens and refreshes known ones", arguments: Backend.allCases)
    func upsert(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            let first = (0..<50).map { Self.registration($0) }
            #expect(try await fixture.store.upsertPushToStartTokens(appID: app.id, first, at: fixture.now) == 50)

            fixture.clock.advance(by: 60)
            var refreshed = Self.registration(7, tags: ["vip"])
            refreshed.iosVersion = "18.4"
            // A duplicate inside one batch counts once; the last one wins.
            let written = try await fixture.store.upsertPushToStartTokens(
                appID: app.id,
                [Self.registration(7), refreshed, Self.registration(100)],
                at: fixture.now
            )
            #expect(written == 2)
            let token = try #require(
                try await fixture.store.pushToStartToken(
                    appID: app.id,
                    environment: .sandbox,
                    attributesType: "MatchAttributes",
                    token: refreshed.token
                )
            )
            #expect(token.tags == ["vip"])
            #expect(token.iosVersion == "18.4")
            #expect(token.deviceID == "device-7")
            #expect(token.userID == nil)
            #expect(token.firstRegisteredAt == fixture.now.addingTimeInterval(-60))
            #expect(token.lastRegisteredAt == fixture.now)
            #expect(!token.description.contains(refreshed.token))
        }
    }

    @Test(
        "a 410 retires a token only when APNs saw it invalid after its last registration",
        arguments: Backend.allCases
    )
    func invalidationRule(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            _ = try await fixture.store.upsertPushToStartTokens(appID: app.id, [Self.registration(1)], at: fixture.now)
            let token = try #require(
                try await fixture.store.audiencePage(
                    AudienceQuery(appID: app.id, environment: .sandbox, attributesType: "MatchAttributes"),
                    after: 0,
                    limit: 10
                ).first
            )
            let registeredMs = Int64(fixture.now.timeIntervalSince1970 * 1000)
            let stale = TokenInvalidation(reason: .unregistered, apnsTimestampMilliseconds: registeredMs - 1)
            #expect(try await !fixture.store.invalidatePushToStartToken(appID: app.id, rowID: token.rowID, stale))

            let other = try await fixture.makeApp("Other")
            let fresh = TokenInvalidation(reason: .unregistered, apnsTimestampMilliseconds: registeredMs + 1)
            #expect(try await !fixture.store.invalidatePushToStartToken(appID: other.id, rowID: token.rowID, fresh))
            #expect(try await fixture.store.invalidatePushToStartToken(appID: app.id, rowID: token.rowID, fresh))

            let retired = try #require(
                try await fixture.store.pushToStartToken(
                    appID: app.id,
                    environment: .sandbox,
                    attributesType: "MatchAttributes",
                    token: token.token
                )
            )
            #expect(retired.invalidationReason == .unregistered)
            #expect(
                retired.invalidatedAt.map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) }
                    == fresh.apnsTimestampMilliseconds
            )

            // The device registers again: the token is valid again.
            fixture.clock.advance(by: 5)
            _ = try await fixture.store.upsertPushToStartTokens(appID: app.id, [Self.registration(1)], at: fixture.now)
            let revived = try await fixture.store.pushToStartToken(
                appID: app.id,
                environment: .sandbox,
                attributesType: "MatchAttributes",
                token: token.token
            )
            #expect(revived?.isValid == true)
            #expect(revived?.rowID == token.rowID)
        }
    }

    @Test("an audience is read page by page, in order, valid tokens of the app only", arguments: Backend.allCases)
    func audiencePages(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            let other = try await fixture.makeApp("Other")
            _ = try await fixture.store.upsertPushToStartTokens(
                appID: app.id,
                (0..<95).map { Self.registration($0, tags: $0.isMultiple(of: 5) ? ["vip", "eu"] : ["eu"]) },
                at: fixture.now
            )
            _ = try await fixture.store.upsertPushToStartTokens(
                appID: app.id,
                (0..<5).map { Self.registration($0, environment: .production) },
                at: fixture.now
            )
            _ = try await fixture.store.upsertPushToStartTokens(
                appID: other.id,
                (0..<10).map { Self.registration($0) },
                at: fixture.now
            )

            let query = AudienceQuery(appID: app.id, environment: .sandbox, attributesType: "MatchAttributes")
            var pages: [[PushToStartToken]] = []
            for try await page in fixture.store.audience(query, pageSize: 20) { pages.append(page) }
            #expect(pages.map(\.count) == [20, 20, 20, 20, 15])
            let tokens = pages.flatMap { $0 }
            #expect(tokens.map(\.rowID) == tokens.map(\.rowID).sorted())
            #expect(Set(tokens.map(\.token)).count == 95)
            #expect(tokens.allSatisfy { $0.appID == app.id && $0.environment == .sandbox })
            // What a fan-out reads: the same rows, with only what a push needs.
            let recipients = try await fixture.store.audienceRecipients(query, after: tokens[19].rowID, limit: 30)
            #expect(recipients == tokens[20..<50].map(AudienceRecipient.init))
            #expect(try await fixture.store.audienceRecipients(query, after: tokens[94].rowID, limit: 30).isEmpty)

            let invalidation = TokenInvalidation(
                reason: .expiredToken,
                apnsTimestampMilliseconds: Int64(fixture.now.timeIntervalSince1970 * 1000) + 1000
            )
            #expect(
                try await fixture.store.invalidatePushToStartToken(appID: app.id, rowID: tokens[3].rowID, invalidation)
            )
            var remaining = 0
            for try await page in fixture.store.audience(query, pageSize: 1000) { remaining += page.count }
            #expect(remaining == 94)

            var vip = query
            vip.tag = "vip"
            let vipTokens = try await fixture.store.audiencePage(vip, after: 0, limit: 1000)
            #expect(vipTokens.count == 19)
            #expect(vipTokens.allSatisfy { $0.tags.contains("vip") })

            // A token registered without its iOS version is read without one.
            var unversioned = Self.registration(500)
            unversioned.iosVersion = nil
            _ = try await fixture.store.upsertPushToStartTokens(appID: app.id, [unversioned], at: fixture.now)
            let last = try await fixture.store.audienceRecipients(query, after: tokens[93].rowID, limit: 30)
            #expect(last.map(\.token) == [tokens[94].token, unversioned.token])
            #expect(last.map(\.iosVersion) == [tokens[94].iosVersion, nil])
        }
    }

    @Test(
        "unregistering a token deletes it with its deliveries and start-ledger entries, and no other app's",
        arguments: Backend.allCases
    )
    func deleteToken(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let scene = try await DeliveryContractTests.scene(fixture)
            let app = scene.app
            try await fixture.store.commitDeliveryBatch(
                DeliveryContractTests.batch(scene, scene.tokens[0..<3], at: fixture.now),
                at: fixture.now
            )
            let target = scene.tokens[0]
            let activity = Activity(
                appID: app.id,
                eventID: scene.event.id,
                environment: .sandbox,
                pushToStartTokenRowID: target.rowID,
                createdAt: fixture.now
            )
            try await fixture.store.recordActivity(activity)
            let other = try await fixture.makeApp("Other")
            _ = try await fixture.store.upsertPushToStartTokens(
                appID: other.id,
                [Self.registration(0)],
                at: fixture.now
            )
            #expect(
                try await fixture.store.startedTokens(appID: app.id, eventID: scene.event.id, among: [target.rowID])
                    == [target.rowID]
            )

            func delete(
                _ appID: AppID,
                _ environment: APNSEnvironment = .sandbox,
                type: String = "MatchAttributes"
            ) async throws -> Bool {
                try await fixture.store.deletePushToStartToken(
                    appID: appID,
                    environment: environment,
                    attributesType: type,
                    token: target.token
                )
            }
            #expect(try await !delete(app.id, .production))
            #expect(try await !delete(app.id, type: "OtherAttributes"))
            #expect(try await delete(app.id))
            #expect(try await !delete(app.id))

            #expect(
                try await fixture.store.pushToStartToken(
                    appID: app.id,
                    environment: .sandbox,
                    attributesType: "MatchAttributes",
                    token: target.token
                )
                    == nil
            )
            // The refused second token's delivery and the third's ledger entry stay.
            let deliveries = try await fixture.store.deliveries(appID: app.id, jobID: scene.job.id)
            #expect(deliveries.map(\.tokenRowID) == [scene.tokens[1].rowID])
            let rowIDs = scene.tokens.map(\.rowID)
            #expect(
                try await fixture.store.startedTokens(appID: app.id, eventID: scene.event.id, among: rowIDs) == [
                    scene.tokens[2].rowID
                ]
            )
            // The activity outlives the token that started it.
            #expect(try await fixture.store.activity(appID: app.id, id: activity.id)?.pushToStartTokenRowID == nil)
            #expect(
                try await fixture.store.pushToStartToken(
                    appID: other.id,
                    environment: .sandbox,
                    attributesType: "MatchAttributes",
                    token: target.token
                )
                    != nil
            )
        }
    }
}
