import Foundation
import MarqueeAPNS
import MarqueeCore
import MarqueeStorage
import MarqueeTesting
import Testing

@testable import MarqueeEngine

/// A broadcast reaches the activities its channel does not (iOS 17.2–17.x, or started with
/// `input-push-token`) as device pushes to their update tokens, through one durable job per event
/// and environment.
@Suite("Engine use case: activity updates")
struct ActivityUpdateUseCaseTests {
    let update = BroadcastDraft(event: .update, contentState: ["score": .string("1-0")])

    /// An activity of event `final` in the sandbox that reported `token` as its update token (and,
    /// for one a start began, the push-to-start token it was started through).
    @discardableResult
    func activity(
        _ id: String,
        token: String,
        startedThrough pushToStartToken: String? = nil,
        frequentPushesEnabled: Bool? = nil,
        in harness: EngineHarness
    ) async throws -> Activity {
        let view = try await harness.events.view(app: harness.app, key: "final")
        return try await harness.tokens.putUpdateToken(
            app: harness.app,
            activityID: id,
            event: view.event,
            environment: .sandbox,
            token: token,
            pushToStartToken: pushToStartToken,
            frequentPushesEnabled: frequentPushesEnabled
        )
    }

    /// An update the producer marked important: asked at priority 10.
    func importantUpdate(_ score: String) -> BroadcastDraft {
        BroadcastDraft(event: .update, contentState: ["score": .string(score)], important: true)
    }

    /// Runs the due activity-update jobs to their end, as a job worker would.
    @discardableResult
    func runActivityUpdates(_ harness: EngineHarness) async throws -> [FanOutRunner.Ending] {
        let handler = ActivityUpdateHandler(
            store: harness.store,
            clients: harness.clients,
            runner: harness.runner,
            budget: harness.configuration.broadcasts.activityBudget
        )
        return try await harness.runDueJobs(handler)
    }

    @Test("an update goes to the channel once and to each activity on an update token as a device push")
    func updateReachesUpdateTokens() async throws {
        let harness = try await EngineHarness()
        try await harness.putEvent("final", environments: [.sandbox])
        let tokens = [EngineHarness.token(10), EngineHarness.token(11)]
        for (index, token) in tokens.enumerated() { try await activity("activity-\(index)", token: token, in: harness) }

        let report = try await harness.broadcasts.broadcast(app: harness.app, key: "final", draft: update)
        #expect(report.allAccepted)
        #expect(report.results.first?.activityUpdates?.total == 2)
        #expect(harness.apns(.sandbox).broadcasts.count == 1)
        #expect(harness.apns(.sandbox).pushes.isEmpty)

        #expect(try await runActivityUpdates(harness) == [.completed])
        let pushes = harness.apns(.sandbox).pushes
        #expect(Set(pushes.map(\.token)) == Set(tokens))
        for push in pushes {
            #expect(push.kind == .update)
            #expect(push.topic == "\(harness.app.bundleID).push-type.liveactivity")
            #expect(push.aps["event"] as? String == "update")
            #expect((push.aps["content-state"] as? [String: Any])?["score"] as? String == "1-0")
        }
        await harness.close()
    }

    @Test("each device push is newer than the channel's broadcast it carries, so a device applies it")
    func timestampsFollowTheChannel() async throws {
        let harness = try await EngineHarness()
        try await harness.putEvent("final", environments: [.sandbox])
        try await activity("activity-1", token: EngineHarness.token(10), in: harness)

        _ = try await harness.broadcasts.broadcast(app: harness.app, key: "final", draft: update)
        _ = try await runActivityUpdates(harness)
        harness.clock.advance(by: 1)
        let second = BroadcastDraft(event: .update, contentState: ["score": .string("2-0")])
        _ = try await harness.broadcasts.broadcast(app: harness.app, key: "final", draft: second)
        _ = try await runActivityUpdates(harness)

        let stamps = harness.apns(.sandbox).pushes.compactMap { ($0.aps["timestamp"] as? NSNumber)?.int64Value }
        #expect(stamps.count == 2)
        #expect(stamps == stamps.sorted() && Set(stamps).count == 2)
        await harness.close()
    }

    @Test("an end reaches the activity as an end; an activity that ended on the device gets nothing")
    func endAndEndedActivities() async throws {
        let harness = try await EngineHarness()
        try await harness.putEvent("final", environments: [.sandbox])
        let live = EngineHarness.token(10)
        try await activity("activity-live", token: live, in: harness)
        try await activity("activity-gone", token: EngineHarness.token(11), in: harness)
        try await harness.tokens.unregisterActivity(app: harness.app, activityID: "activity-gone")

        let end = BroadcastDraft(event: .end, contentState: ["score": .string("3-1")])
        let report = try await harness.broadcasts.broadcast(app: harness.app, key: "final", draft: end)
        #expect(report.results.first?.activityUpdates?.total == 1)
        _ = try await runActivityUpdates(harness)
        let pushes = harness.apns(.sandbox).pushes
        #expect(pushes.map(\.token) == [live])
        #expect(pushes.first?.kind == .end)
        #expect(pushes.first?.aps["event"] as? String == "end")
        await harness.close()
    }

    @Test("with no activity on an update token, a broadcast enqueues no job")
    func noAudienceNoJob() async throws {
        let harness = try await EngineHarness()
        try await harness.putEvent("final", environments: [.sandbox])
        let report = try await harness.broadcasts.broadcast(app: harness.app, key: "final", draft: update)
        #expect(report.results.first?.activityUpdates == nil)
        #expect(try await runActivityUpdates(harness).isEmpty)
        await harness.close()
    }

    @Test("a device started on the channel gets the update through it; one started on an update token by a push")
    func channelOrUpdateToken() async throws {
        let harness = try await EngineHarness()
        let (_, recent, older) = try await harness.startedOnChannelAndUpdateToken(environments: [.sandbox])
        let updateToken = EngineHarness.token(20)
        let adopted = try await activity("activity-older", token: updateToken, startedThrough: older, in: harness)
        #expect(adopted.pushToStartTokenRowID == (try await harness.storedToken(older).rowID))

        let goal = importantUpdate("1-0")
        let report = try await harness.broadcasts.broadcast(app: harness.app, key: "final", draft: goal)
        #expect(report.results.first?.activityUpdates?.total == 1)
        try await runActivityUpdates(harness)
        let fake = harness.apns(.sandbox)
        #expect(fake.broadcasts.count == 1)
        let updates = fake.pushes.filter { $0.kind == .update }
        #expect(updates.map(\.token) == [updateToken])
        #expect(updates.first?.priority == .immediate)
        #expect(updates.first?.topic == "\(harness.app.bundleID).push-type.liveactivity")
        #expect(fake.pushCounts[recent] == 1)
        await harness.close()
    }

    @Test("an activity past its hourly budget is sent at priority 5 (frequent updates: later) until the hour ends")
    func priorityBudget() async throws {
        let budget = ActivityPriorityBudget(limitPerHour: 1, frequentLimitPerHour: 2)
        let harness = try await EngineHarness(broadcasts: BroadcastPolicy(activityBudget: budget))
        try await harness.putEvent("final", environments: [.sandbox])
        let plain = EngineHarness.token(10)
        let frequent = EngineHarness.token(11)
        try await activity("activity-plain", token: plain, in: harness)
        try await activity("activity-frequent", token: frequent, frequentPushesEnabled: true, in: harness)

        for score in ["1-0", "2-0", "3-0"] {
            _ = try await harness.broadcasts.broadcast(app: harness.app, key: "final", draft: importantUpdate(score))
            try await runActivityUpdates(harness)
            harness.clock.advance(by: 60)
        }
        harness.clock.advance(by: ActivityPriorityBudget.window.timeInterval)
        _ = try await harness.broadcasts.broadcast(app: harness.app, key: "final", draft: importantUpdate("4-0"))
        try await runActivityUpdates(harness)

        let pushes = harness.apns(.sandbox).pushes
        let priorities = { (token: String) in pushes.filter { $0.token == token }.map(\.priority) }
        #expect(priorities(plain) == [.immediate, .normal, .normal, .immediate])
        #expect(priorities(frequent) == [.immediate, .immediate, .normal, .immediate])
        await harness.close()
    }

    @Test("an update token APNs answers 410 for ends its activity, and the next update leaves it out")
    func goneEndsTheActivity() async throws {
        let harness = try await EngineHarness()
        try await harness.putEvent("final", environments: [.sandbox])
        let gone = EngineHarness.token(10)
        let live = EngineHarness.token(11)
        try await activity("activity-gone", token: gone, in: harness)
        try await activity("activity-live", token: live, in: harness)
        harness.apns(.sandbox).script(token: gone, .gone(since: harness.clock.now))

        _ = try await harness.broadcasts.broadcast(app: harness.app, key: "final", draft: update)
        try await runActivityUpdates(harness)
        #expect(try await harness.tokens.activity(app: harness.app, activityID: "activity-gone").state == .ended)
        #expect(try await harness.tokens.activity(app: harness.app, activityID: "activity-live").state == .active)

        harness.clock.advance(by: 1)
        let second = BroadcastDraft(event: .update, contentState: ["score": .string("2-0")])
        let report = try await harness.broadcasts.broadcast(app: harness.app, key: "final", draft: second)
        #expect(report.results.first?.activityUpdates?.total == 1)
        try await runActivityUpdates(harness)
        #expect(harness.apns(.sandbox).pushCounts == [gone: 1, live: 2])
        await harness.close()
    }

    @Test(
        """
        a 410 for the update token the device replaced while the push was in flight, dated before the new \
        token came, leaves the activity active, and the next update reaches the new token
        """
    )
    func lateGoneForAReplacedToken() async throws {
        let harness = try await EngineHarness()
        try await harness.putEvent("final", environments: [.sandbox])
        let old = EngineHarness.token(10)
        let new = EngineHarness.token(11)
        try await activity("activity-1", token: old, in: harness)
        let oldSeenDead = harness.clock.now.addingTimeInterval(0.5)
        harness.apns(.sandbox).script(token: old, .gone(since: oldSeenDead))
        harness.apns(.sandbox).holdPushes()

        _ = try await harness.broadcasts.broadcast(app: harness.app, key: "final", draft: update)
        let run = Task { try await runActivityUpdates(harness) }
        try await waitUntil("the push to the old token is written") { harness.apns(.sandbox).heldPushes == 1 }
        // A second later (less than a lease's renewal interval: the run holds its job meanwhile).
        harness.clock.advance(by: 1)
        try await activity("activity-1", token: new, in: harness)  // the device rotated its token
        harness.apns(.sandbox).releasePushes()
        try await run.value
        #expect(try await harness.tokens.activity(app: harness.app, activityID: "activity-1").state == .active)

        harness.clock.advance(by: 1)
        let second = BroadcastDraft(event: .update, contentState: ["score": .string("2-0")])
        let report = try await harness.broadcasts.broadcast(app: harness.app, key: "final", draft: second)
        #expect(report.results.first?.activityUpdates?.total == 1)
        try await runActivityUpdates(harness)
        #expect(harness.apns(.sandbox).pushCounts == [old: 1, new: 1])
        #expect(try await harness.tokens.activity(app: harness.app, activityID: "activity-1").state == .active)
        await harness.close()
    }
}
