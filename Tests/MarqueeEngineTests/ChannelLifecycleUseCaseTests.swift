import Foundation
import MarqueeAPNS
import MarqueeCore
import MarqueeStorage
import MarqueeTesting
import Testing

@testable import MarqueeEngine

/// An event's broadcast channels between APNs and the store: created at APNs and recorded,
/// reconciled with APNs' list, deleted at APNs before their row, never leaked.
@Suite("Engine use case: channel lifecycle")
struct ChannelLifecycleUseCaseTests {
    func sandboxChannel(_ harness: EngineHarness) async throws -> BroadcastChannel {
        let live = try await harness.store.channels(appID: harness.app.id, environment: .sandbox, states: [.active])
        return try #require(live.first)
    }

    @Test("an event gets one channel per environment, created at APNs with the row's request ID and recorded active")
    func createdAndStored() async throws {
        let harness = try await EngineHarness()
        let view = try await harness.putEvent("final")
        #expect(view.channels.count == 2)
        for channel in view.channels {
            let fake = harness.apns(channel.environment)
            #expect(channel.state == .active)
            let apnsID = try #require(channel.apnsChannelID)
            #expect(fake.channels[apnsID] == channel.storagePolicy)
            #expect(fake.createRequestIDs == [channel.createRequestID])
        }
        // Asking again for the event's channel finds the one there is.
        let event = view.event
        let again = try await harness.channels.ensureChannel(app: harness.app, event: event, environment: .sandbox)
        #expect(again.id == view.channels.first { $0.environment == .sandbox }?.id)
        #expect(harness.apns(.sandbox).channelCalls == [.create])
        await harness.close()
    }

    @Test("a creation APNs refuses leaves no live row and nothing at APNs, and a later creation works")
    func refusedCreation() async throws {
        let harness = try await EngineHarness()
        try await harness.putEvent("final", environments: [.production])
        let event = try #require(try await harness.store.event(appID: harness.app.id, externalKey: "final"))
        let fake = harness.apns(.sandbox)
        fake.fail(.create, with: .rejected(APNSRejection(status: 500, reason: .internalServerError)))
        await #expect(throws: EngineError.self) {
            try await harness.channels.ensureChannel(app: harness.app, event: event, environment: .sandbox)
        }
        #expect(fake.channels.isEmpty)
        #expect(
            try await harness.store.liveChannel(appID: harness.app.id, eventID: event.id, environment: .sandbox) == nil
        )

        let made = try await harness.channels.ensureChannel(app: harness.app, event: event, environment: .sandbox)
        #expect(made.state == .active)
        #expect(fake.channels.keys.sorted() == [made.apnsChannelID].compactMap { $0 })
        await harness.close()
    }

    @Test("reconciling records a channel only APNs knows as an orphan, and deletes it when asked")
    func orphanRecordedThenDeleted() async throws {
        let harness = try await EngineHarness()
        try await harness.putEvent("final")
        let fake = harness.apns(.sandbox)
        fake.addChannel("b3JwaGFuLWNoYW5uZWwtaWQ=")

        let first = try await harness.reconciler.reconcile(
            app: harness.app,
            environment: .sandbox,
            deleteOrphans: false
        )
        #expect(first.apnsChannels == 2)
        #expect(first.orphansRecorded == ["b3JwaGFuLWNoYW5uZWwtaWQ="])
        #expect(first.orphansDeleted.isEmpty)
        #expect(first.unchanged == 1)
        let orphans = try await harness.store.channels(
            appID: harness.app.id,
            environment: .sandbox,
            states: [.orphaned]
        )
        #expect(orphans.map(\.apnsChannelID) == ["b3JwaGFuLWNoYW5uZWwtaWQ="])
        #expect(fake.channels["b3JwaGFuLWNoYW5uZWwtaWQ="] != nil)

        let second = try await harness.reconciler.reconcile(
            app: harness.app,
            environment: .sandbox,
            deleteOrphans: true
        )
        #expect(second.orphansRecorded.isEmpty)
        #expect(second.orphansDeleted == ["b3JwaGFuLWNoYW5uZWwtaWQ="])
        #expect(fake.channels.count == 1)
        #expect(
            try await harness.store.channels(appID: harness.app.id, environment: .sandbox, states: [.orphaned]).isEmpty
        )
        await harness.close()
    }

    @Test("reconciling marks deleted an active channel APNs no longer lists, and leaves the other environment alone")
    func storedButGone() async throws {
        let harness = try await EngineHarness()
        try await harness.putEvent("final")
        let channel = try await sandboxChannel(harness)
        harness.apns(.sandbox).removeChannel(try #require(channel.apnsChannelID))
        harness.clock.advance(by: 1)

        let report = try await harness.reconciler.reconcile(
            app: harness.app,
            environment: .sandbox,
            deleteOrphans: false
        )
        #expect(report.markedDeleted == [channel.id])
        #expect(try await harness.channels.channel(app: harness.app, id: channel.id)?.state == .deleted)
        let production = try await harness.reconciler.reconcile(
            app: harness.app,
            environment: .production,
            deleteOrphans: false
        )
        #expect(production.markedDeleted.isEmpty)
        #expect(production.unchanged == 1)
        await harness.close()
    }

    @Test("deleting a channel deletes it at APNs, then its row")
    func deleteAtAPNSThenRow() async throws {
        let harness = try await EngineHarness()
        try await harness.putEvent("final")
        let channel = try await sandboxChannel(harness)
        #expect(try await harness.channels.deleteChannel(app: harness.app, channel: channel))
        #expect(harness.apns(.sandbox).channels.isEmpty)
        #expect(harness.apns(.sandbox).channelCalls == [.create, .delete])
        #expect(try await harness.channels.channel(app: harness.app, id: channel.id)?.state == .deleted)
        await harness.close()
    }

    @Test("a deletion APNs cannot take now leaves the row deleting, to be tried again, and the retry finishes it")
    func failedDeletionIsRetryable() async throws {
        let harness = try await EngineHarness()
        try await harness.putEvent("final")
        let channel = try await sandboxChannel(harness)
        let fake = harness.apns(.sandbox)
        fake.fail(.delete, with: .rejected(APNSRejection(status: 503, reason: .serviceUnavailable)))

        #expect(try await harness.channels.deleteChannel(app: harness.app, channel: channel) == false)
        let deleting = try #require(try await harness.channels.channel(app: harness.app, id: channel.id))
        #expect(deleting.state == .deleting)
        #expect(fake.channels[try #require(channel.apnsChannelID)] != nil)

        #expect(try await harness.channels.deleteChannel(app: harness.app, channel: deleting))
        #expect(fake.channels.isEmpty)
        #expect(try await harness.channels.channel(app: harness.app, id: channel.id)?.state == .deleted)
        await harness.close()
    }

    @Test("a channel already gone at APNs is deleted all the same")
    func alreadyGoneAtAPNS() async throws {
        let harness = try await EngineHarness()
        try await harness.putEvent("final")
        let channel = try await sandboxChannel(harness)
        harness.apns(.sandbox).removeChannel(try #require(channel.apnsChannelID))
        #expect(try await harness.channels.deleteChannel(app: harness.app, channel: channel))
        #expect(try await harness.channels.channel(app: harness.app, id: channel.id)?.state == .deleted)
        await harness.close()
    }
}
