import Foundation
import MarqueeAPNS
import MarqueeCore
import MarqueeStorage
import MarqueeTesting
import Testing

@testable import MarqueeEngine

/// A device whose push-to-start token is registered while its event is live gets the event's start
/// then, once, through the late-join pump: woken by the registration, at the pump's rate, as a
/// start job of its own. Once the event is over, a registration starts nothing.
@Suite("Engine use case: late joiners")
struct LateJoinUseCaseTests {
    /// The harness's late-join pump running as a replica runs it, until the test cancels it.
    func runningPump(
        _ harness: EngineHarness,
        _ configuration: LateJoinConfiguration = LateJoinConfiguration()
    ) -> Task<Void, any Error> {
        let pump = harness.lateJoinPump(configuration)
        return Task { try await pump.run() }
    }

    /// Event `final` started in the sandbox to `devices` registered devices, every start sent: live.
    func liveEvent(_ harness: EngineHarness, devices: Int) async throws -> EventView {
        _ = try await harness.enqueuedStart(devices: devices)
        try await harness.runStartParts()
        return try await harness.events.view(app: harness.app, key: "final")
    }

    /// The late joiners still queued for event `final` in the sandbox.
    func queued(_ harness: EngineHarness, _ view: EventView) async throws -> Int {
        try await harness.store.pendingStartCount(appID: harness.app.id, eventID: view.event.id, environment: .sandbox)
    }

    @Test("a device registered after the start went out gets it through the pump, on the channel, with today's score")
    func lateJoinerGetsTheStart() async throws {
        let harness = try await EngineHarness()
        let view = try await liveEvent(harness, devices: 2)
        #expect(view.event.state == .live)
        let channelID = try #require(view.channels.first { $0.environment == .sandbox }?.apnsChannelID)
        let goal = BroadcastDraft(event: .update, contentState: ["score": .string("1-0")])
        _ = try await harness.broadcasts.broadcast(app: harness.app, key: "final", draft: goal)
        let pump = runningPump(harness)

        let late = EngineHarness.token(100)
        try await harness.register(late)
        try await waitUntil("the pump took the late joiner from the queue") { try await queued(harness, view) == 0 }
        try await harness.runStartParts()
        pump.cancel()
        try await pump.value

        let fake = harness.apns(.sandbox)
        let starts = fake.pushes.filter { $0.token == late }
        #expect(starts.count == 1)
        #expect(starts.first?.kind == .start)
        #expect(starts.first?.aps["input-push-channel"] as? String == channelID)
        #expect((starts.first?.aps["content-state"] as? [String: Any])?["score"] as? String == "1-0")
        #expect(fake.pushes.count == 3)
        let started = try await harness.store.lateJoinStartCount(
            appID: harness.app.id,
            eventID: view.event.id,
            environment: .sandbox
        )
        #expect(started == 1)
        await harness.close()
    }

    @Test("a device registered after the event was closed is not queued, and nothing is sent to it")
    func noLateJoinAfterTheEnd() async throws {
        let harness = try await EngineHarness()
        let view = try await liveEvent(harness, devices: 1)
        _ = try await harness.events.close(app: harness.app, key: "final")

        let late = EngineHarness.token(100)
        try await harness.register(late)
        #expect(try await queued(harness, view) == 0)
        var rate = LateJoinRate(ratePerSecond: 200, now: harness.clock.now)
        var prunedAt: Date?
        _ = await harness.lateJoinPump().drainOnce(&rate, prunedAt: &prunedAt)
        #expect(try await harness.runStartParts().isEmpty)
        #expect(harness.apns(.sandbox).pushCounts[late] == nil)
        await harness.close()
    }

    @Test(
        """
        once the end was broadcast, a device registered before the event is closed is not queued, one queued \
        before the end is dropped, and nothing is sent to either
        """
    )
    func noLateJoinAfterTheEndBroadcast() async throws {
        let harness = try await EngineHarness()
        let view = try await liveEvent(harness, devices: 1)
        let queuedBefore = EngineHarness.token(100)
        try await harness.register(queuedBefore)
        #expect(try await queued(harness, view) == 1)
        let end = BroadcastDraft(event: .end, contentState: ["score": .string("2-1")])
        let report = try await harness.broadcasts.broadcast(app: harness.app, key: "final", draft: end)
        #expect(report.anyAccepted)
        #expect(try await harness.events.view(app: harness.app, key: "final").event.state == .live)

        let registeredAfter = EngineHarness.token(101)
        try await harness.register(registeredAfter)
        var rate = LateJoinRate(ratePerSecond: 200, now: harness.clock.now)
        var prunedAt: Date?
        _ = await harness.lateJoinPump().drainOnce(&rate, prunedAt: &prunedAt)
        #expect(try await queued(harness, view) == 0)
        #expect(try await harness.runStartParts().isEmpty)
        #expect(harness.apns(.sandbox).pushCounts[queuedBefore] == nil)
        #expect(harness.apns(.sandbox).pushCounts[registeredAfter] == nil)
        await harness.close()
    }

    @Test("late joiners go a second's worth at once, then one per 1/rate seconds of the pump's clock")
    func rateSpacesThem() async throws {
        let harness = try await EngineHarness()
        let view = try await liveEvent(harness, devices: 1)
        let fake = harness.apns(.sandbox)
        let late = (100..<105).map(EngineHarness.token)
        let startedLate = { late.filter { fake.pushCounts[$0] != nil }.count }
        let startTime = harness.clock.now
        let pump = runningPump(harness, LateJoinConfiguration(ratePerSecond: 2, pollInterval: .seconds(1)))
        try await waitUntil("the pump waits for its next poll") {
            harness.clock.sleepers == [startTime.addingTimeInterval(1)]
        }
        // Five devices register in one batch, whose registration wakes the pump.
        try await harness.register(late)

        // At each half second the pump has taken what the rate allows and sleeps until the next;
        // the start jobs it enqueued run while it sleeps (the next claim waits for them).
        var counts: [Int] = []
        for step in 1...4 {
            let wakesAt = startTime.addingTimeInterval(0.5 * Double(step))
            try await waitUntil("the pump sleeps until \(wakesAt)") { harness.clock.sleepers.contains(wakesAt) }
            try await harness.runStartParts()
            counts.append(startedLate())
            harness.clock.set(to: wakesAt)
        }
        pump.cancel()
        try await pump.value

        #expect(counts == [2, 3, 4, 5])
        #expect(try await queued(harness, view) == 0)
        #expect(try await harness.runStartParts().isEmpty)
        #expect(late.allSatisfy { fake.pushCounts[$0] == 1 })
        await harness.close()
    }
}
