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
            let device = try fixture.emulator.registerDevice(
                environment: .sandbox,
                bundleID: EmulatorFixture.bundleID,
                iOSVersion: "18.0",
                pushToStartAttributesTypes: ["MatchAttributes"]
            )
            let started = try await fixture.pushLiveActivity(
                to: try #require(device.pushToStartTokens["MatchAttributes"]),
                body: Payloads.start(timestamp: fixture.nowSeconds, channelID: channelID)
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
            "an activity started while a broadcast is being delivered does not get that broadcast, and stays subscribed"
        )
        func subscriberAfterTheAnswerIsNotReached() async throws {
            try await EmulatorFixture.with { fixture in
                await fixture.emulator.courier.shutdown()
                let state = fixture.emulator.state
                let channelID = try await fixture.createChannel(policy: 0)
                for _ in 0..<3 { try await startActivity(on: channelID, fixture) }
                let firstThree = Set(fixture.emulator.activities(in: .sandbox).map(\.id))

                fixture.clock.advance(by: 10)
                let update = try await fixture.broadcast(
                    on: channelID,
                    body: Payloads.update(score: "1-0", timestamp: fixture.nowSeconds - 5)
                )
                #expect(update.status == 200)
                #expect(state.deliverAnsweredBroadcasts(activityLimit: 1) == false)
                // A start is a change to the world: the rest of the update is delivered before it.
                try await startActivity(on: channelID, fixture)
                #expect(state.withWorldBeforeDelivery { $0.deliveryInProgress == nil })

                let activities = fixture.emulator.activities(in: .sandbox)
                #expect(
                    activities.filter { firstThree.contains($0.id) }.allSatisfy { $0.contentState == ["score": "1-0"] }
                )
                #expect(activities.filter { !firstThree.contains($0.id) }.map(\.contentState) == [["score": "0-0"]])
                #expect(fixture.emulator.pushes(to: channelID, in: .sandbox).last?.outcomes.count == 3)
                #expect(Set(fixture.emulator.channels(in: .sandbox).first?.subscriberIDs ?? []).count == 4)
            }
        }
    }
}
