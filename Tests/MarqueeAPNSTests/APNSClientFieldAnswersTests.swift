import Foundation
import MarqueeAPNS
import MarqueeCore
import MarqueeEmulator
import NIOCore
import Testing

/// Apple's servers do not always answer as Apple's documentation says (`apns-reference.md` §6a). The
/// client meets the former in production and the emulator's `documented` profile wherever someone
/// chose it, so every rule here holds against both.
@Suite("The client classifies APNs' answers as the servers send them and as Apple documents them")
struct APNSClientFieldAnswersTests {
    /// A channel ID of the real shape (16 bytes, standard base64) that nobody created.
    static let neverCreatedChannelID = "q83vEjRWeJCrze8SNFZ4kA=="
    static let update = LiveActivityPayload.update(
        contentState: ["home": 1, "away": 0],
        timestamp: Date(timeIntervalSince1970: 1_767_225_600)
    )

    func broadcast(_ fixture: EmulatorFixture, channelID: String) throws -> APNSBroadcast {
        try APNSBroadcast(
            bundleID: fixture.bundleID,
            channelID: channelID,
            storagePolicy: .noMessageStored,
            payload: Self.update
        )
    }

    @Test(
        "a bundle without the Broadcast capability is the app's misconfiguration, sent once and never retried",
        arguments: [
            (APNSEmulatorProfile.observed, APNSErrorReason.broadcastFeatureNotEnabled),
            (.documented, .featureNotEnabled),
        ]
    )
    func featureNotEnabled(profile: APNSEmulatorProfile, reason: APNSErrorReason) async throws {
        try await withEmulatorClient(emulator: EmulatorFixture.configuration(profile: profile)) { fixture in
            try fixture.emulator.registerApp(
                bundleID: "com.example.nobroadcast",
                teamID: fixture.key.teamID,
                broadcastEnabled: false
            )
            let error = await #expect(throws: APNSError.self) {
                _ = try await fixture.client.createChannel(
                    bundleID: "com.example.nobroadcast",
                    storagePolicy: .mostRecentMessageStored
                )
            }
            #expect(error?.reason == reason)
            #expect(error?.failureClass == .appMisconfigured)
            if case .rejected(let rejection)? = error { #expect(rejection.status == 400) }
            #expect(fixture.emulator.rejectedRequests().count == 1)
        }
    }

    @Test(
        "deleting a channel twice succeeds twice: the second answer, whatever its spelling, means already gone",
        arguments: [
            (APNSEmulatorProfile.observed, 404, APNSErrorReason.badPath), (.documented, 400, .channelNotRegistered),
        ]
    )
    func deleteTwice(profile: APNSEmulatorProfile, status: Int, reason: APNSErrorReason) async throws {
        try await withEmulatorClient(emulator: EmulatorFixture.configuration(profile: profile)) { fixture in
            let client = fixture.client
            let created = try await client.createChannel(bundleID: fixture.bundleID, storagePolicy: .noMessageStored)
            let requestID = UUID()
            let first = try await client.deleteChannel(
                bundleID: fixture.bundleID,
                channelID: created.channelID,
                requestID: requestID
            )
            #expect(first == .deleted(requestID: requestID.uuidString.lowercased()))
            let second = try await client.deleteChannel(bundleID: fixture.bundleID, channelID: created.channelID)
            guard case .alreadyGone(let rejection) = second else {
                Issue.record("the second delete should find the channel gone, got \(second)")
                return
            }
            #expect(rejection.status == status)
            #expect(rejection.reason == reason)
            #expect(rejection.requestID != nil)
            #expect(try await client.listChannels(bundleID: fixture.bundleID).isEmpty)
        }
    }

    @Test(
        "reconciling after a crash: deleting a channel this service never saw created is idempotent too",
        arguments: APNSEmulatorProfile.allCases
    )
    func deleteNeverCreated(profile: APNSEmulatorProfile) async throws {
        try await withEmulatorClient(emulator: EmulatorFixture.configuration(profile: profile)) { fixture in
            let outcome = try await fixture.client.deleteChannel(
                bundleID: fixture.bundleID,
                channelID: Self.neverCreatedChannelID
            )
            guard case .alreadyGone = outcome else {
                Issue.record("expected alreadyGone, got \(outcome)")
                return
            }
        }
    }

    @Test(
        "a broadcast to a channel ID that never existed reports the channel gone",
        arguments: [(APNSEmulatorProfile.observed, APNSErrorReason.badChannelId), (.documented, .channelNotRegistered)]
    )
    func broadcastToNeverCreated(profile: APNSEmulatorProfile, reason: APNSErrorReason) async throws {
        try await withEmulatorClient(emulator: EmulatorFixture.configuration(profile: profile)) { fixture in
            let error = await #expect(throws: APNSError.self) {
                _ = try await fixture.client.broadcast(try broadcast(fixture, channelID: Self.neverCreatedChannelID))
            }
            #expect(error?.reason == reason)
            #expect(error?.failureClass == .channelGone)
            #expect(fixture.emulator.rejectedRequests().count == 1)
        }
    }

    @Test(
        "a broadcast to a deleted channel reports it gone with ChannelNotRegistered",
        arguments: APNSEmulatorProfile.allCases
    )
    func broadcastToDeleted(profile: APNSEmulatorProfile) async throws {
        try await withEmulatorClient(emulator: EmulatorFixture.configuration(profile: profile)) { fixture in
            let created = try await fixture.client.createChannel(
                bundleID: fixture.bundleID,
                storagePolicy: .noMessageStored
            )
            try await fixture.client.deleteChannel(bundleID: fixture.bundleID, channelID: created.channelID)
            let error = await #expect(throws: APNSError.self) {
                _ = try await fixture.client.broadcast(try broadcast(fixture, channelID: created.channelID))
            }
            #expect(error?.reason == .channelNotRegistered)
            #expect(error?.failureClass == .channelGone)
        }
    }

    @Test("the client's broadcasts always carry apns-expiration, so the observed BadExpirationDate never reaches them")
    func broadcastsCarryExpiration() async throws {
        try await withEmulatorClient(emulator: EmulatorFixture.configuration(profile: .observed)) { fixture in
            let noStorage = try await fixture.client.createChannel(
                bundleID: fixture.bundleID,
                storagePolicy: .noMessageStored
            )
            let stored = try await fixture.client.createChannel(
                bundleID: fixture.bundleID,
                storagePolicy: .mostRecentMessageStored
            )
            _ = try await fixture.client.broadcast(try broadcast(fixture, channelID: noStorage.channelID))
            _ = try await fixture.client.broadcast(
                try APNSBroadcast(
                    bundleID: fixture.bundleID,
                    channelID: stored.channelID,
                    storagePolicy: .mostRecentMessageStored,
                    payload: Self.update
                )
            )
            #expect(fixture.emulator.rejectedRequests().isEmpty)
            #expect(fixture.emulator.counters.broadcastsAccepted == 2)
        }
    }

    @Test(
        """
        a throttled broadcast (429 TooManyRequests) is retried with back-off and goes through once the channel's \
        rate allows
        """
    )
    func throttledBroadcastRetried() async throws {
        let configuration = EmulatorFixture.configuration {
            $0.broadcastThrottle = APNSEmulatorBroadcastThrottle(interval: 0.05)
        }
        try await withEmulatorClient(
            emulator: configuration,
            retryPolicy: APNSRetryPolicy(
                maximumAttempts: 20,
                initialDelay: .milliseconds(20),
                maximumDelay: .milliseconds(60)
            )
        ) { fixture in
            let created = try await fixture.client.createChannel(
                bundleID: fixture.bundleID,
                storagePolicy: .noMessageStored
            )
            for _ in 0..<3 {
                _ = try await fixture.client.broadcast(try broadcast(fixture, channelID: created.channelID))
            }
            #expect(fixture.emulator.counters.broadcastsAccepted == 3)
        }
    }
}
