import Foundation
import MarqueeCore
import MarqueeEmulator
import Testing

extension EmulatorTests {
    @Suite("Virtual devices: Live Activities start, update and end as a device shows them")
    struct LiveActivityTests {
        private static let attributesType = "MatchAttributes"

        private func registerDevice(
            _ fixture: EmulatorFixture,
            iOS: IOSVersion = "18.0"
        ) throws -> (EmulatedDevice, String) {
            let device = try fixture.emulator.registerDevice(
                environment: .sandbox,
                bundleID: EmulatorFixture.bundleID,
                iOSVersion: iOS,
                pushToStartAttributesTypes: [Self.attributesType]
            )
            return (device, try #require(device.pushToStartTokens[Self.attributesType]))
        }

        @Test(
            """
            Broadcasts reach their subscribers after the answer, as APNs fans them out, yet whatever is read next \
            sees every answered broadcast delivered, in the order answered
            """
        )
        func answeredBroadcastsAreDeliveredInOrderBeforeAnyRead() async throws {
            try await EmulatorFixture.with { fixture in
                let channelID = try await fixture.createChannel(policy: 0)
                for _ in 0..<3 {
                    let (_, pushToStart) = try registerDevice(fixture)
                    let started = try await fixture.pushLiveActivity(
                        to: pushToStart,
                        body: Payloads.start(timestamp: fixture.nowSeconds, channelID: channelID)
                    )
                    #expect(started.status == 200)
                }
                let activityIDs = fixture.emulator.activities(in: .sandbox).map(\.id)
                #expect(activityIDs.count == 3)

                // Three answers back to back, read only afterwards: the last one is what every device shows.
                fixture.clock.advance(by: 10)
                for (offset, score) in ["1-0", "2-0"].enumerated() {
                    let update = try await fixture.broadcast(
                        on: channelID,
                        body: Payloads.update(score: score, timestamp: fixture.nowSeconds + Int64(offset))
                    )
                    #expect(update.status == 200)
                }
                let end = try await fixture.broadcast(
                    on: channelID,
                    body: Payloads.end(score: "3-0", timestamp: fixture.nowSeconds + 2)
                )
                #expect(end.status == 200)
                for id in activityIDs {
                    let activity = try #require(fixture.emulator.activity(id: id, in: .sandbox))
                    #expect(activity.contentState == ["score": "3-0"])
                    #expect(activity.endedAt != nil)
                }
                let recorded = fixture.emulator.pushes(to: channelID, in: .sandbox)
                #expect(
                    recorded.suffix(3).map(\.outcomes) == Array(repeating: [.applied, .applied, .applied], count: 3)
                )
                // The end unsubscribed them all.
                #expect(fixture.emulator.channels(in: .sandbox).first?.subscriberIDs == [])
            }
        }

        @Test(
            """
            On iOS 18, a start with input-push-channel subscribes the new activity to the channel, and broadcasts \
            update it
            """
        )
        func startOnChannel() async throws {
            try await EmulatorFixture.with { fixture in
                let channelID = try await fixture.createChannel(policy: 0)
                let (device, pushToStart) = try registerDevice(fixture)
                let started = try await fixture.pushLiveActivity(
                    to: pushToStart,
                    body: Payloads.start(timestamp: fixture.nowSeconds, channelID: channelID)
                )
                #expect(started.status == 200)
                let activity = try #require(fixture.emulator.activities(in: .sandbox).first)
                #expect(activity.deviceID == device.id)
                #expect(activity.channelID == channelID)
                #expect(activity.updateToken == nil)
                #expect(activity.contentState == ["score": "0-0"])
                #expect(fixture.emulator.channels(in: .sandbox).first?.subscriberIDs == [activity.id])

                fixture.clock.advance(by: 10)
                let update = try await fixture.broadcast(
                    on: channelID,
                    body: Payloads.update(score: "1-0", timestamp: fixture.nowSeconds)
                )
                #expect(update.status == 200)
                #expect(update.header("apns-request-id") != nil)
                #expect(update.header("apns-unique-id") != nil)
                #expect(fixture.emulator.activity(id: activity.id, in: .sandbox)?.contentState == ["score": "1-0"])
                #expect(fixture.emulator.pushes(to: channelID, in: .sandbox).last?.outcomes == [.applied])
            }
        }

        @Test(
            """
            With Live Activities turned off for the app, APNs answers a start 200 and nothing shows; turned on \
            again, the next start shows
            """
        )
        func liveActivitiesOff() async throws {
            try await EmulatorFixture.with { fixture in
                let (device, pushToStart) = try registerDevice(fixture)
                try fixture.emulator.setLiveActivitiesEnabled(false, environment: .sandbox, deviceID: device.id)
                #expect(fixture.emulator.device(id: device.id, in: .sandbox)?.areLiveActivitiesEnabled == false)
                let ignored = try await fixture.pushLiveActivity(
                    to: pushToStart,
                    body: Payloads.start(timestamp: fixture.nowSeconds, inputPushToken: true)
                )
                #expect(ignored.status == 200)
                #expect(fixture.emulator.activities(in: .sandbox).isEmpty)
                #expect(
                    fixture.emulator.pushes(to: pushToStart, in: .sandbox).last?.outcomes
                        == [
                            .ignored(
                                "Live Activities are turned off for the app: APNs accepted the start, nothing shows"
                            )
                        ]
                )

                try fixture.emulator.setLiveActivitiesEnabled(true, environment: .sandbox, deviceID: device.id)
                fixture.clock.advance(by: 1)
                _ = try await fixture.pushLiveActivity(
                    to: pushToStart,
                    body: Payloads.start(timestamp: fixture.nowSeconds, inputPushToken: true)
                )
                #expect(fixture.emulator.activities(in: .sandbox).count == 1)
            }
        }

        @Test(
            """
            On iOS 18, input-push-token issues an update token the app reports; updates and ends through it \
            change the activity
            """
        )
        func startWithUpdateToken() async throws {
            try await EmulatorFixture.with { fixture in
                let (_, pushToStart) = try registerDevice(fixture)
                _ = try await fixture.pushLiveActivity(
                    to: pushToStart,
                    body: Payloads.start(timestamp: fixture.nowSeconds, inputPushToken: true)
                )
                let reported = try #require(fixture.emulator.reportedUpdateTokens(in: .sandbox).first)
                #expect(reported.attributesType == Self.attributesType)

                fixture.clock.advance(by: 5)
                let update = try await fixture.pushLiveActivity(
                    to: reported.token,
                    body: Payloads.update(score: "2-1", timestamp: fixture.nowSeconds)
                )
                #expect(update.status == 200)
                #expect(
                    fixture.emulator.activity(id: reported.activityID, in: .sandbox)?.contentState == ["score": "2-1"]
                )

                fixture.clock.advance(by: 5)
                let end = try await fixture.pushLiveActivity(
                    to: reported.token,
                    body: Payloads.end(
                        score: "3-1",
                        timestamp: fixture.nowSeconds,
                        dismissalDate: fixture.nowSeconds + 600
                    )
                )
                #expect(end.status == 200)
                let ended = try #require(fixture.emulator.activity(id: reported.activityID, in: .sandbox))
                #expect(ended.phase == .ended)
                #expect(ended.contentState == ["score": "3-1"])
                fixture.clock.advance(by: 601)
                #expect(fixture.emulator.activity(id: reported.activityID, in: .sandbox)?.phase == .dismissed)
            }
        }

        @Test(
            "Before iOS 18 a remote start issues an update token anyway, and input-push-channel does not start anything"
        )
        func beforeIOS18() async throws {
            try await EmulatorFixture.with { fixture in
                let channelID = try await fixture.createChannel()
                let (_, pushToStart) = try registerDevice(fixture, iOS: "17.2")
                _ = try await fixture.pushLiveActivity(
                    to: pushToStart,
                    body: Payloads.start(timestamp: fixture.nowSeconds, channelID: channelID)
                )
                #expect(fixture.emulator.activities(in: .sandbox).isEmpty)
                #expect(
                    fixture.emulator.pushes(to: pushToStart, in: .sandbox).last?.outcomes.first?.description.contains(
                        "iOS 18"
                    ) == true
                )

                _ = try await fixture.pushLiveActivity(
                    to: pushToStart,
                    body: Payloads.start(timestamp: fixture.nowSeconds)
                )
                let activity = try #require(fixture.emulator.activities(in: .sandbox).first)
                #expect(activity.updateToken != nil)
                #expect(fixture.emulator.reportedUpdateTokens(in: .sandbox).map(\.token) == [activity.updateToken])
            }
        }

        @Test("Push-to-start tokens need iOS 17.2")
        func pushToStartNeedsIOS17_2() throws {
            let emulator = APNSEmulator()
            _ = try emulator.makeDemoKey(bundleID: "com.example.app")
            #expect(throws: EmulatorError.pushToStartNeedsIOS17_2("17.1")) {
                try emulator.registerDevice(
                    environment: .sandbox,
                    bundleID: "com.example.app",
                    iOSVersion: "17.1",
                    pushToStartAttributesTypes: ["A"]
                )
            }
        }

        @Test("An update whose timestamp is not newer than the last applied one is ignored")
        func staleTimestampIgnored() async throws {
            try await EmulatorFixture.with { fixture in
                let (_, pushToStart) = try registerDevice(fixture)
                let start = fixture.nowSeconds
                _ = try await fixture.pushLiveActivity(
                    to: pushToStart,
                    body: Payloads.start(timestamp: start, inputPushToken: true)
                )
                let token = try #require(fixture.emulator.reportedUpdateTokens(in: .sandbox).first?.token)
                _ = try await fixture.pushLiveActivity(
                    to: token,
                    body: Payloads.update(score: "1-0", timestamp: start + 20)
                )
                let late = try await fixture.pushLiveActivity(
                    to: token,
                    body: Payloads.update(score: "0-1", timestamp: start + 10)
                )
                let same = try await fixture.pushLiveActivity(
                    to: token,
                    body: Payloads.update(score: "0-2", timestamp: start + 20)
                )
                #expect(late.status == 200)
                #expect(same.status == 200)
                let activity = try #require(fixture.emulator.activities(in: .sandbox).first)
                #expect(activity.contentState == ["score": "1-0"])
                #expect(activity.updatesApplied == 1)
                #expect(activity.updatesIgnored == 2)
            }
        }

        @Test(
            """
            stale-date makes an activity stale; the system ends it after 8 hours; it leaves the Lock Screen 4 \
            hours later
            """
        )
        func timeRules() async throws {
            try await EmulatorFixture.with { fixture in
                let (_, pushToStart) = try registerDevice(fixture)
                let start = fixture.nowSeconds
                _ = try await fixture.pushLiveActivity(
                    to: pushToStart,
                    body: Payloads.start(timestamp: start, inputPushToken: true, staleDate: start + 60)
                )
                let id = try #require(fixture.emulator.activities(in: .sandbox).first?.id)
                #expect(fixture.emulator.activity(id: id, in: .sandbox)?.phase == .active)
                fixture.clock.advance(by: 61)
                #expect(fixture.emulator.activity(id: id, in: .sandbox)?.phase == .stale)
                fixture.clock.advance(by: 8 * 3600)
                let ended = try #require(fixture.emulator.activity(id: id, in: .sandbox))
                #expect(ended.phase == .ended)
                #expect(ended.endedAt == Date(timeIntervalSince1970: TimeInterval(start + 8 * 3600)))
                fixture.clock.advance(by: 4 * 3600)
                #expect(fixture.emulator.activity(id: id, in: .sandbox)?.phase == .dismissed)
            }
        }

        @Test("A dismissal date beyond 4 hours is capped; a past one removes the activity at once")
        func dismissalDates() async throws {
            try await EmulatorFixture.with { fixture in
                let (_, pushToStart) = try registerDevice(fixture)
                for (offset, expectedDelay) in [(Int64(6 * 3600), 4 * 3600.0), (-100, 0)] {
                    _ = try await fixture.pushLiveActivity(
                        to: pushToStart,
                        body: Payloads.start(timestamp: fixture.nowSeconds, inputPushToken: true)
                    )
                    let reported = try #require(fixture.emulator.reportedUpdateTokens(in: .sandbox).last)
                    fixture.clock.advance(by: 1)
                    let endedAt = fixture.clock.now
                    _ = try await fixture.pushLiveActivity(
                        to: reported.token,
                        body: Payloads.end(
                            score: "1-1",
                            timestamp: fixture.nowSeconds,
                            dismissalDate: fixture.nowSeconds + offset
                        )
                    )
                    let activity = try #require(fixture.emulator.activity(id: reported.activityID, in: .sandbox))
                    #expect(activity.dismissalDate == endedAt.addingTimeInterval(expectedDelay))
                }
            }
        }

        @Test("An ended activity's update token answers 200 for a while, then 410 Unregistered with the time it lapsed")
        func updateTokenLapses() async throws {
            try await EmulatorFixture.with({ $0.updateTokenLifetimeAfterEnd = 600 }) { fixture in
                let (_, pushToStart) = try registerDevice(fixture)
                _ = try await fixture.pushLiveActivity(
                    to: pushToStart,
                    body: Payloads.start(timestamp: fixture.nowSeconds, inputPushToken: true)
                )
                let token = try #require(fixture.emulator.reportedUpdateTokens(in: .sandbox).first?.token)
                fixture.clock.advance(by: 1)
                let endedAt = fixture.clock.now
                _ = try await fixture.pushLiveActivity(
                    to: token,
                    body: Payloads.end(score: "1-0", timestamp: fixture.nowSeconds)
                )
                fixture.clock.advance(by: 300)
                let during = try await fixture.pushLiveActivity(
                    to: token,
                    body: Payloads.update(score: "9-9", timestamp: fixture.nowSeconds)
                )
                #expect(during.status == 200)
                #expect(
                    fixture.emulator.pushes(to: token, in: .sandbox).last?.outcomes == [
                        .ignored("the activity has ended")
                    ]
                )
                fixture.clock.advance(by: 301)
                let after = try await fixture.pushLiveActivity(
                    to: token,
                    body: Payloads.update(score: "9-9", timestamp: fixture.nowSeconds)
                )
                #expect(after.status == 410)
                #expect(after.reason == "Unregistered")
                #expect(
                    after.json?["timestamp"] as? Int
                        == Int(endedAt.addingTimeInterval(600).timeIntervalSince1970 * 1000)
                )
            }
        }

        @Test("The device-side push-to-start budget drops starts beyond it, or answers 429 when configured")
        func pushToStartBudget() async throws {
            try await EmulatorFixture.with({ $0.pushToStartBudget = 2 }) { fixture in
                let (_, pushToStart) = try registerDevice(fixture)
                for _ in 0..<3 {
                    let response = try await fixture.pushLiveActivity(
                        to: pushToStart,
                        body: Payloads.start(timestamp: fixture.nowSeconds)
                    )
                    #expect(response.status == 200)
                }
                #expect(fixture.emulator.activities(in: .sandbox).count == 2)
                #expect(
                    fixture.emulator.pushes(to: pushToStart, in: .sandbox).last?.outcomes == [
                        .ignored("push-to-start budget exhausted")
                    ]
                )
                fixture.clock.advance(by: 3600)
                _ = try await fixture.pushLiveActivity(
                    to: pushToStart,
                    body: Payloads.start(timestamp: fixture.nowSeconds)
                )
                #expect(fixture.emulator.activities(in: .sandbox).count == 3)
            }
            try await EmulatorFixture.with({
                $0.pushToStartBudget = 1
                $0.budgetExceededResponse = .tooManyRequests
            }) { fixture in
                let (_, pushToStart) = try registerDevice(fixture)
                _ = try await fixture.pushLiveActivity(
                    to: pushToStart,
                    body: Payloads.start(timestamp: fixture.nowSeconds)
                )
                let refused = try await fixture.pushLiveActivity(
                    to: pushToStart,
                    body: Payloads.start(timestamp: fixture.nowSeconds)
                )
                #expect(refused.status == 429)
                #expect(refused.reason == "TooManyRequests")
            }
        }

        @Test("Priority-10 updates beyond the hourly budget are dropped; priority 5 never counts")
        func priorityTenBudget() async throws {
            try await EmulatorFixture.with({ $0.priorityTenBudgetPerHour = 2 }) { fixture in
                let (_, pushToStart) = try registerDevice(fixture)
                let start = fixture.nowSeconds
                _ = try await fixture.pushLiveActivity(
                    to: pushToStart,
                    body: Payloads.start(timestamp: start, inputPushToken: true)
                )
                let token = try #require(fixture.emulator.reportedUpdateTokens(in: .sandbox).first?.token)
                for second in 1...3 {
                    _ = try await fixture.pushLiveActivity(
                        to: token,
                        body: Payloads.update(score: "\(second)-0", timestamp: start + Int64(second))
                    )
                }
                #expect(fixture.emulator.activities(in: .sandbox).first?.contentState == ["score": "2-0"])
                _ = try await fixture.pushLiveActivity(
                    to: token,
                    body: Payloads.update(score: "5-0", timestamp: start + 5),
                    priority: 5
                )
                #expect(fixture.emulator.activities(in: .sandbox).first?.contentState == ["score": "5-0"])
            }
        }

        @Test("A push-to-start token answers 410 once rotated; the new one starts activities")
        func rotatedPushToStartToken() async throws {
            try await EmulatorFixture.with { fixture in
                let (device, old) = try registerDevice(fixture)
                let new = try fixture.emulator.rotatePushToStartToken(
                    environment: .sandbox,
                    deviceID: device.id,
                    attributesType: Self.attributesType
                )
                let refused = try await fixture.pushLiveActivity(
                    to: old,
                    body: Payloads.start(timestamp: fixture.nowSeconds)
                )
                #expect(refused.status == 410)
                let accepted = try await fixture.pushLiveActivity(
                    to: new,
                    body: Payloads.start(timestamp: fixture.nowSeconds)
                )
                #expect(accepted.status == 200)
            }
        }
    }

}
