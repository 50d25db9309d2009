import Foundation
import MarqueeAPNS
import MarqueeCore
import MarqueeEmulator
import NIOCore
import Testing

@Suite("APNs client round trips over TLS HTTP/2 against the emulator")
struct APNSClientRoundTripTests {
    @Test("channel lifecycle, a push-to-start onto the channel, a broadcast update and a device update")
    func fullLifecycle() async throws {
        try await withEmulatorClient { fixture in
            let client = fixture.client
            let bundleID = fixture.bundleID
            let device = try fixture.emulator.registerDevice(
                environment: .sandbox,
                bundleID: bundleID,
                iOSVersion: IOSVersion(18, 0),
                pushToStartAttributesTypes: ["MatchAttributes"]
            )

            // Channel management: create (201 + apns-channel-id), read, list.
            let requestID = UUID()
            let created = try await client.createChannel(
                bundleID: bundleID,
                storagePolicy: .noMessageStored,
                requestID: requestID
            )
            #expect(!created.channelID.isEmpty)
            #expect(created.requestID == requestID.uuidString.lowercased())
            let read = try await client.readChannel(bundleID: bundleID, channelID: created.channelID)
            #expect(read.storagePolicy == .noMessageStored)
            #expect(read.pushType == "LiveActivity")
            #expect(try await client.listChannels(bundleID: bundleID) == [created.channelID])

            // Push-to-start subscribed to the channel.
            let now = Date()
            let startToken = try #require(device.pushToStartTokens["MatchAttributes"])
            let apnsID = UUID()
            let start = LiveActivityPayload.start(
                .init(
                    attributesType: "MatchAttributes",
                    attributes: ["homeTeam": "Home FC"],
                    updates: .channel(created.channelID)
                ),
                contentState: ["home": 0, "away": 0],
                alert: LiveActivityAlert(title: "Kick-off", body: "Home FC vs Away FC", sound: "default"),
                timestamp: now
            )
            let started = try await client.send(
                try APNSDevicePush(
                    deviceToken: startToken,
                    bundleID: bundleID,
                    payload: start,
                    priority: .normal,
                    expiration: .at(now.addingTimeInterval(600)),
                    collapseID: "match-1",
                    apnsID: apnsID
                )
            )
            #expect(started.apnsID == apnsID.uuidString.lowercased())
            #expect(started.uniqueID != nil)
            let received = try #require(fixture.emulator.pushes(to: startToken, in: .sandbox).last)
            #expect(received.pushType == "liveactivity")
            #expect(received.priority == 5)
            #expect(received.collapseID == "match-1")
            #expect(received.expiration == Int64(now.addingTimeInterval(600).timeIntervalSince1970))
            #expect(received.payload == String(decoding: start.jsonObject.jsonBytes, as: UTF8.self))
            let activity = try #require(fixture.emulator.activities(in: .sandbox).first)
            #expect(activity.channelID == created.channelID)

            // Broadcast on the channel: No Message Stored forces apns-expiration 0.
            let broadcastID = UUID()
            let broadcast = try await client.broadcast(
                try APNSBroadcast(
                    bundleID: bundleID,
                    channelID: created.channelID,
                    storagePolicy: .noMessageStored,
                    payload: LiveActivityPayload.update(
                        contentState: ["home": 1, "away": 0],
                        timestamp: now.addingTimeInterval(1)
                    ),
                    expiration: .at(now.addingTimeInterval(3600)),
                    requestID: broadcastID
                )
            )
            #expect(broadcast.requestID == broadcastID.uuidString.lowercased())
            #expect(broadcast.uniqueID != nil)
            let onChannel = try #require(fixture.emulator.pushes(to: created.channelID, in: .sandbox).last)
            #expect(onChannel.expiration == 0)
            #expect(fixture.emulator.activity(id: activity.id, in: .sandbox)?.contentState == ["home": 1, "away": 0])

            // Delete (204); the channel is gone afterwards.
            try await client.deleteChannel(bundleID: bundleID, channelID: created.channelID)
            let error = await #expect(throws: APNSError.self) {
                _ = try await client.readChannel(bundleID: bundleID, channelID: created.channelID)
            }
            #expect(error?.failureClass == .channelGone)
        }
    }

    @Test("device tokens of any hex length reach the server unchanged; malformed ones are refused before sending")
    func tokenShapes() async throws {
        #expect(throws: APNSError.self) {
            try APNSDevicePush(deviceToken: "not-hex", bundleID: "b", payload: ByteBuffer(string: "{}"))
        }
        try await withEmulatorClient { fixture in
            let longToken = String(repeating: "ab", count: 80)
            let error = await #expect(throws: APNSError.self) {
                _ = try await fixture.client.send(
                    try APNSDevicePush(
                        deviceToken: longToken,
                        bundleID: fixture.bundleID,
                        payload: ByteBuffer(string: #"{"aps":{}}"#)
                    )
                )
            }
            // Unknown to the emulator, so the token is reported dead, and the request went out whole.
            #expect(error?.failureClass == .tokenDead)
            #expect(fixture.emulator.rejectedRequests().last?.path == "/3/device/" + longToken)
        }
    }

    @Test(
        "a background push wakes the app through its device token: push type background, the bare bundle ID, priority 5"
    )
    func backgroundPush() async throws {
        try await withEmulatorClient { fixture in
            let device = try fixture.emulator.registerDevice(environment: .sandbox, bundleID: fixture.bundleID)
            let body = ByteBuffer(string: #"{"aps":{"content-available":1},"marquee":{"ask":"presence"}}"#)
            let push = try APNSDevicePush.background(
                deviceToken: device.deviceToken,
                bundleID: fixture.bundleID,
                payload: body
            )
            #expect(push.kind == .background)
            _ = try await fixture.client.send(push)
            let received = try #require(fixture.emulator.pushes(to: device.deviceToken, in: .sandbox).last)
            #expect(received.pushType == "background")
            #expect(received.priority == 5)
            #expect(fixture.emulator.counters.devicePushesAccepted == 1)
        }
    }

    @Test("cleartext h2c works for local targets")
    func cleartext() async throws {
        let configuration = EmulatorFixture.configuration { $0.h2c = true }
        try await withEmulatorClient(emulator: configuration) { fixture in
            let port = try #require(
                fixture.emulator.port(for: APNSEmulatorListener(environment: .sandbox, kind: .push, transport: .h2c))
            )
            let key = fixture.key
            let client = try APNSClient(
                configuration: APNSClientConfiguration(
                    environment: .sandbox,
                    signingKey: try APNSSigningKey(pemRepresentation: key.p8PEM, keyID: key.keyID, teamID: key.teamID),
                    pushEndpoint: APNSEndpoint(host: "127.0.0.1", port: port, security: .cleartext)
                )
            )
            let device = try fixture.emulator.registerDevice(environment: .sandbox, bundleID: fixture.bundleID)
            let push = try APNSDevicePush(
                deviceToken: device.deviceToken,
                bundleID: fixture.bundleID,
                payload: ByteBuffer(string: #"{"aps":{}}"#)
            )
            let outcome: Result<APNSDeviceResult, APNSError>
            do throws(APNSError) {
                outcome = .success(try await client.send(push))
            } catch {
                outcome = .failure(error)
            }
            await client.shutdown()
            #expect(throws: Never.self) { try outcome.get() }
            #expect(fixture.emulator.counters.devicePushesAccepted == 1)
        }
    }
}
