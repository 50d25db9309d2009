import Foundation
import MarqueeCore
import MarqueeStorage
import Testing

@Suite("Activities")
struct ActivityContractTests {
    @Test("update tokens keep their rotation history with one current token", arguments: Backend.allCases)
    func tokenRotation(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            let event = try await fixture.makeEvent(for: app)
            let channel = try await fixture.makeActiveChannel(for: event)
            let activity = Activity(
                appID: app.id,
                eventID: event.id,
                environment: .sandbox,
                channelID: channel.id,
                createdAt: fixture.now
            )
            try await fixture.store.recordActivity(activity)
            #expect(try await fixture.store.activity(appID: app.id, id: activity.id) == activity)

            let first = try await fixture.store.recordUpdateToken(
                appID: app.id,
                id: activity.id,
                activityID: "A-1",
                token: "aa01",
                frequentPushesEnabled: false,
                at: fixture.now
            )
            #expect(first.state == .active)
            #expect(first.currentUpdateToken == "aa01")
            fixture.clock.advance(by: 30)
            let rotated = try await fixture.store.recordUpdateToken(
                appID: app.id,
                id: activity.id,
                activityID: "A-1",
                token: "bb02",
                frequentPushesEnabled: true,
                at: fixture.now
            )
            #expect(!first.frequentPushesEnabled && rotated.frequentPushesEnabled)
            #expect(rotated.currentUpdateToken == "bb02")
            #expect(rotated.updateTokens.map(\.token) == ["aa01", "bb02"])
            #expect(rotated.updateTokens[0].retiredAt == fixture.now)
            #expect(try await fixture.store.activity(appID: app.id, activityID: "A-1")?.id == activity.id)

            let other = try await fixture.makeApp("Other")
            #expect(try await fixture.store.activity(appID: other.id, activityID: "A-1") == nil)
            #expect(
                try await fixture.store.setActivityState(appID: app.id, id: activity.id, state: .ended, at: fixture.now)
            )
        }
    }

    @Test("device-push timestamps strictly increase per activity", arguments: Backend.allCases)
    func timestamps(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            let event = try await fixture.makeEvent(for: app)
            let activity = Activity(appID: app.id, eventID: event.id, environment: .production, createdAt: fixture.now)
            try await fixture.store.recordActivity(activity)
            #expect(try await fixture.store.nextActivityTimestamp(appID: app.id, id: activity.id, now: 100) == 100)
            #expect(try await fixture.store.nextActivityTimestamp(appID: app.id, id: activity.id, now: 100) == 101)
            #expect(try await fixture.store.nextActivityTimestamp(appID: app.id, id: activity.id, now: 50) == 102)
        }
    }

    @Test(
        """
        a broadcast's read of the event says where it has activities on update tokens: not on a channel, not \
        ended, with a current token
        """,
        arguments: Backend.allCases
    )
    func broadcastTarget(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let store = fixture.store
            let app = try await fixture.makeApp()
            let event = try await fixture.makeEvent(for: app)
            let channel = try await fixture.makeActiveChannel(for: event)
            #expect(
                try await store.broadcastTarget(appID: app.id, externalKey: event.externalKey)
                    == BroadcastTarget(event: event, updateTokenEnvironments: [])
            )

            // On the channel: the broadcast reaches it there.
            let onChannel = Activity(
                appID: app.id,
                eventID: event.id,
                environment: .sandbox,
                channelID: channel.id,
                createdAt: fixture.now
            )
            try await store.recordActivity(onChannel)
            _ = try await store.recordUpdateToken(
                appID: app.id,
                id: onChannel.id,
                activityID: "A-1",
                token: "aa01",
                frequentPushesEnabled: false,
                at: fixture.now
            )
            // Without an update token yet: nothing to push to.
            let unreported = Activity(appID: app.id, eventID: event.id, environment: .sandbox, createdAt: fixture.now)
            try await store.recordActivity(unreported)
            #expect(
                try await store.broadcastTarget(appID: app.id, externalKey: event.externalKey)?.updateTokenEnvironments
                    == []
            )

            let onToken = Activity(appID: app.id, eventID: event.id, environment: .production, createdAt: fixture.now)
            try await store.recordActivity(onToken)
            _ = try await store.recordUpdateToken(
                appID: app.id,
                id: onToken.id,
                activityID: "A-2",
                token: "bb02",
                frequentPushesEnabled: false,
                at: fixture.now
            )
            #expect(
                try await store.broadcastTarget(appID: app.id, externalKey: event.externalKey)?.updateTokenEnvironments
                    == [.production]
            )

            #expect(try await store.setActivityState(appID: app.id, id: onToken.id, state: .ended, at: fixture.now))
            #expect(
                try await store.broadcastTarget(appID: app.id, externalKey: event.externalKey)?.updateTokenEnvironments
                    == []
            )

            let other = try await fixture.makeApp("Other")
            #expect(try await store.broadcastTarget(appID: other.id, externalKey: event.externalKey) == nil)
        }
    }
}
