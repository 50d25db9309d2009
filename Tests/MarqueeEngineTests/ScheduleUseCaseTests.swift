import Foundation
import MarqueeCore
import MarqueeStorage
import MarqueeTesting
import Testing

@testable import MarqueeEngine

/// Starts and broadcasts scheduled for later: checked when they are asked for, listed by due time,
/// cancelled while they wait, performed when the clock reaches them (and not before), with what
/// came of them recorded; and an event's timeline, whose steps are schedules of their own.
@Suite("Engine use case: schedules")
struct ScheduleUseCaseTests {
    /// Schedules a start of the event (the harness's start request by default) at `at`.
    func scheduleStart(
        at: Date,
        eventKey: String = "final",
        request: StartRequest? = nil,
        in harness: EngineHarness
    ) async throws -> ScheduleID {
        try await harness.schedules.scheduleStart(
            app: harness.app,
            eventKey: eventKey,
            request: request ?? harness.startRequest(),
            at: at
        ).schedule.id
    }

    /// Schedules a broadcast of event `final` at `at`.
    func scheduleBroadcast(_ draft: BroadcastDraft, at: Date, in harness: EngineHarness) async throws -> ScheduleID {
        try await harness.schedules.scheduleBroadcast(app: harness.app, eventKey: "final", draft: draft, at: at)
            .schedule.id
    }

    /// What a schedule recorded when it ran.
    func outcome(of id: ScheduleID, in harness: EngineHarness) async throws -> (Schedule, ScheduleOutcome?) {
        let schedule = try await harness.schedules.schedule(app: harness.app, id: id).schedule
        return (schedule, schedule.outcome.flatMap(ScheduleOutcome.init(json:)))
    }

    @Test("a start at kick-off and the end at the whistle are listed by due time, and nothing runs before")
    func listedByDueTime() async throws {
        let harness = try await EngineHarness()
        try await harness.putEvent("final")
        let kickOff = harness.clock.now.addingTimeInterval(600)
        let whistle = kickOff.addingTimeInterval(6300)
        let end = BroadcastDraft(event: .end, contentState: ["score": .string("2-1")])
        let ending = try await scheduleBroadcast(end, at: whistle, in: harness)
        let start = try await scheduleStart(at: kickOff, in: harness)

        let listed = try await harness.schedules.schedules(app: harness.app, eventKey: "final", after: nil, limit: 10)
        let ours = listed.filter { $0.schedule.origin == .api }
        #expect(ours.map(\.schedule.id) == [start, ending])
        #expect(ours.allSatisfy { $0.schedule.state == .pending })
        #expect(harness.apns(.sandbox).pushes.isEmpty && harness.apns(.sandbox).broadcasts.isEmpty)
        await harness.close()
    }

    @Test("a schedule is refused when it is asked for: a time long past names at, a bad start its field")
    func refusedWhenAsked() async throws {
        let harness = try await EngineHarness(environments: [.sandbox])
        try await harness.putEvent("final", environments: [.sandbox])
        let longAgo = harness.clock.now.addingTimeInterval(-(ScheduleService.pastTolerance + 1))
        await #expect(throws: EngineError.self) {
            _ = try await scheduleStart(at: longAgo, in: harness)
        }
        await #expect(throws: EngineError.self) {
            let production = harness.startRequest(.production)
            _ = try await scheduleStart(at: harness.clock.now.addingTimeInterval(600), request: production, in: harness)
        }
        await #expect(throws: EngineError.notFound(resource: "event", id: "semi")) {
            _ = try await scheduleStart(at: harness.clock.now.addingTimeInterval(600), eventKey: "semi", in: harness)
        }
        let listed = try await harness.schedules.schedules(app: harness.app, eventKey: "final", after: nil, limit: 10)
        #expect(listed.filter { $0.schedule.origin == .api }.isEmpty)
        await harness.close()
    }

    @Test("a waiting schedule is cancelled, and cancelling it again answers the same")
    func cancel() async throws {
        let harness = try await EngineHarness()
        try await harness.putEvent("final")
        let start = try await scheduleStart(at: harness.clock.now.addingTimeInterval(600), in: harness)
        let cancelled = try await harness.schedules.cancel(app: harness.app, id: start)
        #expect(cancelled.schedule.state == .cancelled)
        let again = try await harness.schedules.cancel(app: harness.app, id: start)
        #expect(again.schedule.state == .cancelled)
        #expect(
            try await harness.schedules.schedule(app: harness.app, id: start).schedule.state == .cancelled
        )
        await #expect(throws: EngineError.self) {
            _ = try await harness.schedules.cancel(app: harness.app, id: ScheduleID())
        }
        await harness.close()
    }

    @Test("a start scheduled at kick-off runs when the clock reaches it, not a second before, and once")
    func startRunsAtItsTime() async throws {
        let harness = try await EngineHarness()
        try await harness.putEvent("final")
        let device = EngineHarness.token(1)
        try await harness.register(device)
        let kickOff = harness.clock.now.addingTimeInterval(600)
        let scheduled = try await scheduleStart(at: kickOff, in: harness)

        #expect(try await harness.runSchedules(at: kickOff.addingTimeInterval(-1)) == 0)
        #expect(try await harness.runStartParts().isEmpty)
        #expect(try await harness.runSchedules(at: kickOff) == 1)
        let (ran, outcome) = try await outcome(of: scheduled, in: harness)
        #expect(ran.state == .succeeded)
        #expect(ran.performedAt == kickOff)
        #expect(outcome?.startJobs == [JobID(startOf: scheduled, environment: .sandbox)])
        try await harness.runStartParts()
        #expect(harness.apns(.sandbox).pushCounts == [device: 1])
        #expect(try await harness.runSchedules(at: kickOff.addingTimeInterval(3600)) == 0)
        await harness.close()
    }

    @Test("an end scheduled at the whistle goes to each of the event's channels as an end, at its time")
    func endAtTheWhistle() async throws {
        let harness = try await EngineHarness()
        let event = try await harness.putEvent("final")
        let whistle = harness.clock.now.addingTimeInterval(6900)
        let end = BroadcastDraft(event: .end, contentState: ["score": .string("2-1")])
        let scheduled = try await scheduleBroadcast(end, at: whistle, in: harness)

        #expect(try await harness.runSchedules(at: whistle.addingTimeInterval(-1)) == 0)
        #expect(harness.apns(.sandbox).broadcasts.isEmpty && harness.apns(.production).broadcasts.isEmpty)
        #expect(try await harness.runSchedules(at: whistle) == 1)
        for environment in [APNSEnvironment.sandbox, .production] {
            let sent = harness.apns(environment).broadcasts
            #expect(sent.map(\.channelID) == [event.channels.first { $0.environment == environment }?.apnsChannelID])
            #expect(sent.first?.aps["event"] as? String == "end")
            #expect((sent.first?.aps["content-state"] as? [String: Any])?["score"] as? String == "2-1")
        }
        let (ran, outcome) = try await outcome(of: scheduled, in: harness)
        #expect(ran.state == .succeeded)
        #expect(outcome?.broadcast?.map(\.status) == [.accepted, .accepted])
        await harness.close()
    }

    @Test("a cancelled schedule never runs, however far the clock goes")
    func cancelledNeverRuns() async throws {
        let harness = try await EngineHarness()
        try await harness.putEvent("final")
        try await harness.register(EngineHarness.token(1))
        let kickOff = harness.clock.now.addingTimeInterval(600)
        let scheduled = try await scheduleStart(at: kickOff, in: harness)
        _ = try await harness.schedules.cancel(app: harness.app, id: scheduled)

        #expect(try await harness.runSchedules(at: kickOff.addingTimeInterval(86400)) == 0)
        #expect(try await harness.runStartParts().isEmpty)
        let (schedule, _) = try await outcome(of: scheduled, in: harness)
        #expect(schedule.state == .cancelled)
        #expect(schedule.performedAt == nil)
        #expect(harness.apns(.sandbox).pushes.isEmpty)
        await harness.close()
    }

    @Test("a scheduled update APNs refuses is recorded failed with the reason the immediate call gives, not retried")
    func failureRecordedWithItsReason() async throws {
        let harness = try await EngineHarness()
        let event = try await harness.putEvent("final", environments: [.sandbox])
        let channelID = try #require(event.channels.first?.apnsChannelID)
        let due = harness.clock.now.addingTimeInterval(1800)
        let goal = BroadcastDraft(event: .update, contentState: ["score": .string("1-0")])
        let scheduled = try await scheduleBroadcast(goal, at: due, in: harness)
        harness.apns(.sandbox).script(channel: channelID, .rejected(status: 400, reason: .channelNotRegistered))

        #expect(try await harness.runSchedules(at: due) == 1)
        let (ran, outcome) = try await outcome(of: scheduled, in: harness)
        #expect(ran.state == .failed)
        let gone = EngineError.channelGone(environments: [.sandbox], reason: .channelNotRegistered)
        #expect(ran.lastError == gone.description)
        let result = try #require(outcome?.broadcast?.first)
        #expect(result.status == .failed)
        #expect(result.httpStatus == 400 && result.apnsReason == "ChannelNotRegistered")
        #expect(result.channelDeleted == true)
        #expect(try await harness.runSchedules(at: due.addingTimeInterval(3600)) == 0)
        #expect(harness.apns(.sandbox).broadcasts.count == 1)
        await harness.close()
    }

    @Test("an event's timeline runs by the clock: channels at the lead, the start, the end, the channels deleted")
    func timelineByTheClock() async throws {
        let harness = try await EngineHarness(environments: [.sandbox])
        let start = TimelineStart(
            attributes: ["home": .string("Lyon")],
            contentState: ["score": .string("0-0")],
            alert: ["title": .string("Kick-off"), "body": .string("The final starts")]
        )
        let settings = EventTimelineSettings(
            automatic: true,
            start: start,
            channelLeadSeconds: 300,
            endAfterSeconds: 5400,
            deleteChannelsAfterSeconds: 1800
        )
        let put = try await harness.putEvent("final", environments: [.sandbox], timeline: settings)
        let kickOff = put.event.plannedStart
        let at = { (seconds: TimeInterval) in kickOff.addingTimeInterval(seconds) }
        let device = EngineHarness.token(1)
        try await harness.register(device)
        let fake = harness.apns(.sandbox)
        #expect(fake.channels.isEmpty)
        let steps = try await harness.store.timelineSteps(appID: harness.app.id, eventID: put.event.id)
        let due = Dictionary(uniqueKeysWithValues: steps.map { ($0.kind, $0.dueAt.timeIntervalSince(kickOff)) })
        #expect(due == [.channels: -300, .start: 0, .end: 5400, .close: 7200])

        #expect(try await harness.runSchedules(at: at(-301)) == 0)
        #expect(try await harness.runSchedules(at: at(-300)) == 1)
        #expect(fake.channels.count == 1)
        #expect(try await harness.runSchedules(at: at(-1)) == 0)
        #expect(try await harness.runSchedules(at: kickOff) == 1)
        try await harness.runStartParts()
        #expect(fake.pushCounts == [device: 1])

        #expect(try await harness.runSchedules(at: at(5399)) == 0)
        #expect(try await harness.runSchedules(at: at(5400)) == 1)
        let ends = fake.broadcasts
        #expect(ends.map { $0.aps["event"] as? String } == ["end"])
        #expect(ends.first?.aps["dismissal-date"] as? Int == Int(at(5400).timeIntervalSince1970))
        #expect((ends.first?.aps["content-state"] as? [String: Any])?["score"] as? String == "0-0")

        #expect(try await harness.runSchedules(at: at(7199)) == 0)
        #expect(fake.channels.count == 1)
        #expect(try await harness.runSchedules(at: at(7200)) == 1)
        #expect(fake.channels.isEmpty)
        #expect(try await harness.events.view(app: harness.app, key: "final").event.state == .ended)
        await harness.close()
    }
}
