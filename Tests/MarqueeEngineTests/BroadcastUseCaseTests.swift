import Foundation
import MarqueeAPNS
import MarqueeCore
import MarqueeStorage
import MarqueeTesting
import Testing

@testable import MarqueeEngine

/// Broadcasting an update to an event's channels: one request per environment's channel, the
/// hourly budget of priority 10, and APNs' refusals reported with their reason.
@Suite("Engine use case: broadcast")
struct BroadcastUseCaseTests {
    let update = BroadcastDraft(event: .update, contentState: ["score": .string("1-0")])
    let important = BroadcastDraft(event: .update, contentState: ["score": .string("2-0")], important: true)

    func result(_ report: BroadcastReport, _ environment: APNSEnvironment) throws -> EnvironmentBroadcast {
        try #require(report.results.first { $0.environment == environment })
    }

    func channelID(_ harness: EngineHarness, _ environment: APNSEnvironment) async throws -> String {
        let live = try await harness.store.channels(appID: harness.app.id, environment: environment, states: [.active])
        return try #require(live.first?.apnsChannelID)
    }

    @Test("each environment's channel gets the broadcast, with one timestamp sequence per channel")
    func everyEnvironmentsChannel() async throws {
        let harness = try await EngineHarness()
        try await harness.putEvent("final")
        let report = try await harness.broadcasts.broadcast(app: harness.app, key: "final", draft: update)

        #expect(report.allAccepted)
        #expect(report.results.map(\.environment) == [.production, .sandbox])
        for environment in APNSEnvironment.allCases {
            let sent = harness.apns(environment).broadcasts
            #expect(sent.map(\.channelID) == [try await channelID(harness, environment)])
            #expect(sent.first?.priority == .normal)
            #expect(sent.first?.aps["event"] as? String == "update")
            #expect(
                (sent.first?.aps["timestamp"] as? Int).map(Int64.init) == (try result(report, environment).timestamp)
            )
        }
        let second = try await harness.broadcasts.broadcast(app: harness.app, key: "final", draft: update)
        let first = try #require(try result(report, .sandbox).timestamp)
        #expect(try #require(try result(second, .sandbox).timestamp) > first)
        await harness.close()
    }

    @Test("an environment without an active channel is reported and skipped; the other still gets it")
    func missingChannel() async throws {
        let harness = try await EngineHarness()
        try await harness.putEvent("final")
        let sandbox = try #require(
            try await harness.store.channels(appID: harness.app.id, environment: .sandbox, states: [.active]).first
        )
        #expect(try await harness.channels.deleteChannel(app: harness.app, channel: sandbox))

        let report = try await harness.broadcasts.broadcast(app: harness.app, key: "final", draft: update)
        guard case .noActiveChannel = try result(report, .sandbox).outcome else {
            Issue.record("sandbox: \(try result(report, .sandbox).outcome)")
            return
        }
        #expect(try result(report, .production).isAccepted)
        #expect(harness.apns(.sandbox).broadcasts.isEmpty)
        #expect(harness.apns(.production).broadcasts.count == 1)
        await harness.close()
    }

    @Test(
        "priority 10 spends the channel's hourly budget; past it broadcasts go at 5, said so, until the hour passes"
    )
    func priorityBudget() async throws {
        let harness = try await EngineHarness(broadcasts: BroadcastPolicy(priorityBudgetPerHour: 2))
        try await harness.putEvent("final", environments: [.sandbox])
        var decisions: [PriorityDecision] = []
        for _ in 1...3 {
            let report = try await harness.broadcasts.broadcast(app: harness.app, key: "final", draft: important)
            decisions.append(try #require(try result(report, .sandbox).decision))
        }
        #expect(decisions.map(\.priority) == [.immediate, .immediate, .normal])
        #expect(decisions.map(\.downgraded) == [false, false, true])
        #expect(decisions[2].downgradeReason?.contains("budget of 2") == true)
        #expect(harness.apns(.sandbox).broadcasts.map(\.priority) == [.immediate, .immediate, .normal])
        let use = try await harness.broadcasts.priorityBudgetUse(app: harness.app, key: "final", environment: .sandbox)
        #expect(use.limitPerHour == 2)
        #expect(use.used == 2)

        // A broadcast that does not ask for 10 spends nothing.
        _ = try await harness.broadcasts.broadcast(app: harness.app, key: "final", draft: update)
        #expect(harness.apns(.sandbox).broadcasts.last?.priority == .normal)

        harness.clock.advance(by: PriorityBudget.window.timeInterval + 1)
        let later = try await harness.broadcasts.broadcast(app: harness.app, key: "final", draft: important)
        #expect(try result(later, .sandbox).decision?.priority == .immediate)
        await harness.close()
    }

    @Test("APNs' refusal in one environment is reported with its status and reason; the other is unaffected")
    func refusalSurfaced() async throws {
        let harness = try await EngineHarness()
        try await harness.putEvent("final")
        let sandboxChannel = try await channelID(harness, .sandbox)
        harness.apns(.sandbox).script(channel: sandboxChannel, .rejected(status: 400, reason: .badRequestPayload))

        let report = try await harness.broadcasts.broadcast(app: harness.app, key: "final", draft: update)
        #expect(!report.allAccepted)
        #expect(report.anyAccepted)
        guard case .failed(let status, let reason, _, let channelDeleted) = try result(report, .sandbox).outcome else {
            Issue.record("sandbox: \(try result(report, .sandbox).outcome)")
            return
        }
        #expect(status == 400)
        #expect(reason == .badRequestPayload)
        #expect(!channelDeleted)
        #expect(try result(report, .production).isAccepted)
        let log = try await harness.broadcasts.log(
            app: harness.app,
            key: "final",
            environment: .sandbox,
            before: nil,
            limit: 10
        )
        #expect(log.map(\.status) == [400])
        #expect(log.first?.reason == .badRequestPayload)
        await harness.close()
    }

    @Test("a channel APNs says is gone is reported so and marked deleted; the next broadcast finds no channel")
    func channelGoneAtAPNS() async throws {
        let harness = try await EngineHarness()
        try await harness.putEvent("final", environments: [.sandbox])
        let sandboxChannel = try await channelID(harness, .sandbox)
        harness.apns(.sandbox).script(channel: sandboxChannel, .rejected(status: 400, reason: .channelNotRegistered))

        let report = try await harness.broadcasts.broadcast(app: harness.app, key: "final", draft: update)
        guard case .failed(let status, let reason, _, let channelDeleted) = try result(report, .sandbox).outcome else {
            Issue.record("sandbox: \(try result(report, .sandbox).outcome)")
            return
        }
        #expect(status == 400)
        #expect(reason == .channelNotRegistered)
        #expect(channelDeleted)
        #expect(
            try await harness.store.channels(appID: harness.app.id, environment: .sandbox, states: [.active]).isEmpty
        )

        let next = try await harness.broadcasts.broadcast(app: harness.app, key: "final", draft: update)
        guard case .noActiveChannel = try result(next, .sandbox).outcome else {
            Issue.record("sandbox: \(try result(next, .sandbox).outcome)")
            return
        }
        #expect(harness.apns(.sandbox).broadcasts.count == 1)
        await harness.close()
    }
}
