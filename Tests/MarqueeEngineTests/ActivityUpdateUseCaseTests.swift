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

    /// An activity of event `final` in the sandbox that reported `token` as its update token.
    @discardableResult
    func activity(_ id: String, token: String, in harness: EngineHarness) async throws -> Activity {
        let view = try await harness.events.view(app: harness.app, key: "final")
        return try await harness.tokens.putUpdateToken(
            app: harness.app,
            activityID: id,
            event: view.event,
            environment: .sandbox,
            token: token
        )
    }

    /// Runs the due activity-update jobs to their end, as a job worker would.
    func runActivityUpdates(_ harness: EngineHarness) async throws -> [FanOutRunner.Ending] {
        let handler = ActivityUpdateHandler(
            store: harness.store,
            clients: harness.clients,
            runner: harness.runner,
            budget: harness.configuration.broadcasts.activityBudget
        )
        var endings: [FanOutRunner.Ending] = []
        while let job = try await harness.store.leaseJobs(
            owner: "worker",
            kinds: [.activityUpdate],
            now: harness.clock.now,
            leaseDuration: harness.runner.configuration.leaseDuration,
            limit: 1
        ).first {
            endings.append(try await handler.run(job, owner: "worker", stop: RunStop()))
        }
        return endings
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
}
