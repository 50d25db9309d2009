import Foundation
import MarqueeCore
import Testing

@testable import MarqueeEmulator

extension EmulatorTests {
    /// A broadcast reaches its channel's subscribers a slice at a time after its answer, so that a
    /// large channel's walk never holds the world's lock whole; what reads the world still sees
    /// every answered broadcast delivered, in order. The courier is stopped here and the test
    /// delivers the slices itself.
    @Suite("Broadcast delivery: a channel's subscribers a slice at a time")
    struct BroadcastDeliveryTests {
        /// A new iOS 18 device, and a Live Activity started on it subscribed to `channelID`.
        private func startActivity(on channelID: String, _ fixture: EmulatorFixture) async throws {
            try await start(on: channelID, through: try newDevice(fixture), fixture)
        }

        /// A new iOS 18 device's push-to-start token.
        private func newDevice(_ fixture: EmulatorFixture) throws -> String {
            let device = try fixture.emulator.registerDevice(
                environment: .sandbox,
                bundleID: EmulatorFixture.bundleID,
                iOSVersion: "18.0",
                pushToStartAttributesTypes: ["MatchAttributes"]
            )
            return try #require(device.pushToStartTokens["MatchAttributes"])
        }

        /// A start through `pushToStart` subscribed to `channelID`, with an update token too when
        /// asked.
        private func start(
            on channelID: String,
            through pushToStart: String,
            inputPushToken: Bool = false,
            _ fixture: EmulatorFixture
        ) async throws {
            let started = try await fixture.pushLiveActivity(
                to: pushToStart,
                body: Payloads.start(
                    timestamp: fixture.nowSeconds,
                    channelID: channelID,
                    inputPushToken: inputPushToken
                )
            )
            #expect(started.status == 200)
        }

        @Test(
            """
            A broadcast is admitted and answered while another is halfway through its subscribers, \
            leaving that delivery where it was; a read then sees both delivered, in the order answered
            """
        )
        func admissionDoesNotWaitForADeliveryInProgress() async throws {
            try await EmulatorFixture.with { fixture in
                await fixture.emulator.courier.shutdown()
                let state = fixture.emulator.state
                let channelID = try await fixture.createChannel(policy: 0)
                for _ in 0..<5 { try await startActivity(on: channelID, fixture) }
                let activityIDs = fixture.emulator.activities(in: .sandbox).map(\.id)
                #expect(activityIDs.count == 5)
                func scores() -> [JSONValue?] {
                    state.withWorldBeforeDelivery { world in
                        activityIDs.map {
                            world.environments[.sandbox]?.activities[$0]?.activity.contentState?["score"]
                        }
                    }
                }

                fixture.clock.advance(by: 10)
                let update = try await fixture.broadcast(
                    on: channelID,
                    body: Payloads.update(score: "1-0", timestamp: fixture.nowSeconds)
                )
                #expect(update.status == 200)
                #expect(state.deliverAnsweredBroadcasts(activityLimit: 2) == false)
                #expect(scores().filter { $0 == "1-0" }.count == 2)

                let end = try await fixture.broadcast(
                    on: channelID,
                    body: Payloads.end(score: "2-0", timestamp: fixture.nowSeconds + 1)
                )
                #expect(end.status == 200)
                // The end's checks and admission delivered nothing: the update is still two in.
                #expect(state.withWorldBeforeDelivery { $0.deliveryInProgress?.reached } == 2)
                #expect(state.withWorldBeforeDelivery { $0.answeredBroadcasts.count } == 1)
                #expect(scores().filter { $0 == "1-0" }.count == 2)

                // A read delivers the rest first: the update to the other three, then the end to all five.
                for id in activityIDs {
                    let activity = try #require(fixture.emulator.activity(id: id, in: .sandbox))
                    #expect(activity.contentState == ["score": "2-0"])
                    #expect(activity.endedAt != nil)
                    #expect(activity.updatesApplied == 2)
                }
                let recorded = fixture.emulator.pushes(to: channelID, in: .sandbox)
                #expect(
                    recorded.suffix(2).map(\.outcomes)
                        == Array(repeating: Array(repeating: .applied, count: 5), count: 2)
                )
                #expect(fixture.emulator.channels(in: .sandbox).first?.subscriberIDs == [])
            }
        }

        @Test(
            """
            A start arriving while a broadcast is being delivered neither waits for that delivery nor gets the \
            broadcast; its activity stays subscribed
            """
        )
        func startDuringADeliveryIsNotReached() async throws {
            try await EmulatorFixture.with { fixture in
                await fixture.emulator.courier.shutdown()
                let state = fixture.emulator.state
                let channelID = try await fixture.createChannel(policy: 0)
                for _ in 0..<3 { try await startActivity(on: channelID, fixture) }
                let firstThree = Set(fixture.emulator.activities(in: .sandbox).map(\.id))
                let latecomer = try newDevice(fixture)

                fixture.clock.advance(by: 10)
                let update = try await fixture.broadcast(
                    on: channelID,
                    body: Payloads.update(score: "1-0", timestamp: fixture.nowSeconds - 5)
                )
                #expect(update.status == 200)
                #expect(state.deliverAnsweredBroadcasts(activityLimit: 1) == false)
                try await start(on: channelID, through: latecomer, fixture)
                #expect(state.withWorldBeforeDelivery { $0.deliveryInProgress?.reached } == 1)

                let activities = fixture.emulator.activities(in: .sandbox)
                #expect(
                    activities.filter { firstThree.contains($0.id) }.allSatisfy { $0.contentState == ["score": "1-0"] }
                )
                #expect(activities.filter { !firstThree.contains($0.id) }.map(\.contentState) == [["score": "0-0"]])
                #expect(fixture.emulator.pushes(to: channelID, in: .sandbox).last?.outcomes.count == 3)
                #expect(Set(fixture.emulator.channels(in: .sandbox).first?.subscriberIDs ?? []).count == 4)
            }
        }

        @Test(
            """
            A push to an update token waits for the broadcasts answered before it: its activity gets the \
            broadcast first, then the push
            """
        )
        func updateTokenPushComesAfterTheDelivery() async throws {
            try await EmulatorFixture.with { fixture in
                await fixture.emulator.courier.shutdown()
                let state = fixture.emulator.state
                let channelID = try await fixture.createChannel(policy: 0)
                for _ in 0..<2 { try await startActivity(on: channelID, fixture) }
                try await start(on: channelID, through: try newDevice(fixture), inputPushToken: true, fixture)
                let last = try #require(fixture.emulator.activities(in: .sandbox).first { $0.updateToken != nil })
                let updateToken = try #require(last.updateToken)

                fixture.clock.advance(by: 10)
                let broadcast = try await fixture.broadcast(
                    on: channelID,
                    body: Payloads.update(score: "1-0", timestamp: fixture.nowSeconds - 5)
                )
                #expect(broadcast.status == 200)
                #expect(state.deliverAnsweredBroadcasts(activityLimit: 1) == false)
                let pushed = try await fixture.pushLiveActivity(
                    to: updateToken,
                    body: Payloads.update(score: "2-0", timestamp: fixture.nowSeconds)
                )
                #expect(pushed.status == 200)

                let activity = try #require(fixture.emulator.activity(id: last.id, in: .sandbox))
                #expect(activity.contentState == ["score": "2-0"])
                #expect(activity.updatesApplied == 2)
                #expect(
                    fixture.emulator.pushes(to: channelID, in: .sandbox).last?.outcomes
                        == Array(repeating: .applied, count: 3)
                )
            }
        }
    }
}
