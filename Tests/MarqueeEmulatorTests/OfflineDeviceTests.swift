import Foundation
import MarqueeCore
import MarqueeEmulator
import Testing

extension EmulatorTests {
    @Suite("Offline devices: APNs holds the newest push that asks to be kept, and channels their stored message")
    struct OfflineDeviceTests {
        /// An alert push to the device's own token with an explicit `apns-expiration`.
        private func alert(
            _ fixture: EmulatorFixture,
            to device: EmulatedDevice,
            text: String,
            expiration: Int64?
        ) async throws -> TestResponse {
            var headers: [(String, String)] = [
                try fixture.bearer(), ("apns-push-type", "alert"), ("apns-topic", EmulatorFixture.bundleID),
            ]
            if let expiration { headers.append(("apns-expiration", String(expiration))) }
            let client = try await fixture.connect()
            defer { Task { await client.close() } }
            return try await client.send(
                path: "/3/device/\(device.deviceToken)",
                headers: headers,
                body: #"{"aps":{"alert":"\#(text)"}}"#
            )
        }

        private func outcomes(_ fixture: EmulatorFixture, _ target: String) -> [String: [DeviceOutcome]] {
            Dictionary(
                uniqueKeysWithValues: fixture.emulator.pushes(to: target, in: .sandbox).map {
                    ($0.payload, $0.outcomes)
                }
            )
        }

        @Test(
            """
            Offline, only the newest kept push is held; apns-expiration 0 is not kept; back online, the held one \
            arrives
            """
        )
        func heldPush() async throws {
            try await EmulatorFixture.with { fixture in
                let device = try fixture.emulator.registerDevice(
                    environment: .sandbox,
                    bundleID: EmulatorFixture.bundleID
                )
                try fixture.emulator.setDeviceOnline(false, environment: .sandbox, deviceID: device.id)
                #expect(fixture.emulator.device(id: device.id, in: .sandbox)?.isOnline == false)

                let later = fixture.nowSeconds + 3600
                // APNs accepts every push for an offline device: the device's state is not its business.
                #expect(try await alert(fixture, to: device, text: "first", expiration: later).status == 200)
                #expect(try await alert(fixture, to: device, text: "second", expiration: nil).status == 200)
                #expect(try await alert(fixture, to: device, text: "once", expiration: 0).status == 200)

                try fixture.emulator.setDeviceOnline(true, environment: .sandbox, deviceID: device.id)
                let seen = outcomes(fixture, device.deviceToken)
                let first = try #require(seen[#"{"aps":{"alert":"first"}}"#])
                #expect(first.count == 2)
                #expect(
                    first.last == .ignored("discarded while the device was offline: APNs keeps only the newest push")
                )
                let second = try #require(seen[#"{"aps":{"alert":"second"}}"#])
                #expect(second.count == 2)
                guard case .stored = second.first else {
                    Issue.record("not stored: \(second)")
                    return
                }
                #expect(second.last == .applied)
                #expect(
                    seen[#"{"aps":{"alert":"once"}}"#] == [
                        .ignored("the device is offline and apns-expiration 0 asks APNs not to keep the push")
                    ]
                )
            }
        }

        @Test("A held push that expires before the device is back is never delivered")
        func expiredWhileOffline() async throws {
            try await EmulatorFixture.with { fixture in
                let device = try fixture.emulator.registerDevice(
                    environment: .sandbox,
                    bundleID: EmulatorFixture.bundleID
                )
                try fixture.emulator.setDeviceOnline(false, environment: .sandbox, deviceID: device.id)
                #expect(
                    try await alert(fixture, to: device, text: "soon", expiration: fixture.nowSeconds + 60).status
                        == 200
                )
                fixture.clock.advance(by: 61)
                try fixture.emulator.setDeviceOnline(true, environment: .sandbox, deviceID: device.id)
                #expect(
                    outcomes(fixture, device.deviceToken)[#"{"aps":{"alert":"soon"}}"#]?.last
                        == .ignored("expired while the device was offline")
                )
            }
        }

        @Test(
            """
            A Live Activity offline catches up with its channel's most recent stored message; on a \
            No-Message-Stored channel it misses the updates
            """
        )
        func channelMessagesWhileOffline() async throws {
            try await EmulatorFixture.with { fixture in
                for policy in [1, 0] {
                    let channelID = try await fixture.createChannel(policy: policy)
                    let device = try fixture.emulator.registerDevice(
                        environment: .sandbox,
                        bundleID: EmulatorFixture.bundleID,
                        pushToStartAttributesTypes: ["MatchAttributes"]
                    )
                    let pushToStart = try #require(device.pushToStartTokens["MatchAttributes"])
                    let start = Payloads.start(timestamp: fixture.nowSeconds, channelID: channelID)
                    #expect(try await fixture.pushLiveActivity(to: pushToStart, body: start).status == 200)
                    let activity = try #require(
                        fixture.emulator.activities(in: .sandbox).first { $0.channelID == channelID }
                    )

                    try fixture.emulator.setDeviceOnline(false, environment: .sandbox, deviceID: device.id)
                    // A stored channel keeps messages with a non-zero expiration (here its longest, 8 hours).
                    let expiration = policy == 1 ? String(fixture.nowSeconds + 8 * 3600) : "0"
                    for score in ["1-0", "2-0"] {
                        fixture.clock.advance(by: 10)
                        let update = Payloads.update(score: score, timestamp: fixture.nowSeconds)
                        #expect(
                            try await fixture.broadcast(on: channelID, body: update, expiration: expiration).status
                                == 200
                        )
                    }
                    #expect(fixture.emulator.activity(id: activity.id, in: .sandbox)?.contentState == ["score": "0-0"])

                    fixture.clock.advance(by: 10)
                    try fixture.emulator.setDeviceOnline(true, environment: .sandbox, deviceID: device.id)
                    let shown = fixture.emulator.activity(id: activity.id, in: .sandbox)?.contentState
                    let history = fixture.emulator.pushes(to: channelID, in: .sandbox).map(\.outcomes)
                    if policy == 1 {
                        #expect(shown == ["score": "2-0"])
                        #expect(history.last?.last == .applied)
                    } else {
                        #expect(shown == ["score": "0-0"])
                        #expect(
                            history.allSatisfy {
                                $0 == [.ignored("the device is offline and the channel stores no messages")]
                            }
                        )
                    }
                }
            }
        }
    }
}
