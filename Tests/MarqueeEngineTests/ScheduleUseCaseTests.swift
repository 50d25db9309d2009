import Foundation
import MarqueeCore
import MarqueeTesting
import Testing

@testable import MarqueeEngine

/// Starts and broadcasts scheduled for later: checked when they are asked for, listed by due time,
/// cancelled while they wait.
@Suite("Engine use case: schedules")
struct ScheduleUseCaseTests {
    @Test("a start at kick-off and the end at the whistle are listed by due time, and nothing runs before")
    func listedByDueTime() async throws {
        let harness = try await EngineHarness()
        try await harness.putEvent("final")
        let kickOff = harness.clock.now.addingTimeInterval(600)
        let whistle = kickOff.addingTimeInterval(6300)
        let end = BroadcastDraft(event: .end, contentState: ["score": .string("2-1")])
        let ending = try await harness.schedules.scheduleBroadcast(
            app: harness.app,
            eventKey: "final",
            draft: end,
            at: whistle
        )
        let start = try await harness.schedules.scheduleStart(
            app: harness.app,
            eventKey: "final",
            request: harness.startRequest(),
            at: kickOff
        )

        let listed = try await harness.schedules.schedules(app: harness.app, eventKey: "final", after: nil, limit: 10)
        let ours = listed.filter { $0.schedule.origin == .api }
        #expect(ours.map(\.schedule.id) == [start.schedule.id, ending.schedule.id])
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
            _ = try await harness.schedules.scheduleStart(
                app: harness.app,
                eventKey: "final",
                request: harness.startRequest(),
                at: longAgo
            )
        }
        await #expect(throws: EngineError.self) {
            _ = try await harness.schedules.scheduleStart(
                app: harness.app,
                eventKey: "final",
                request: harness.startRequest(.production),
                at: harness.clock.now.addingTimeInterval(600)
            )
        }
        await #expect(throws: EngineError.notFound(resource: "event", id: "semi")) {
            _ = try await harness.schedules.scheduleStart(
                app: harness.app,
                eventKey: "semi",
                request: harness.startRequest(),
                at: harness.clock.now.addingTimeInterval(600)
            )
        }
        let listed = try await harness.schedules.schedules(app: harness.app, eventKey: "final", after: nil, limit: 10)
        #expect(listed.filter { $0.schedule.origin == .api }.isEmpty)
        await harness.close()
    }

    @Test("a waiting schedule is cancelled, and cancelling it again answers the same")
    func cancel() async throws {
        let harness = try await EngineHarness()
        try await harness.putEvent("final")
        let start = try await harness.schedules.scheduleStart(
            app: harness.app,
            eventKey: "final",
            request: harness.startRequest(),
            at: harness.clock.now.addingTimeInterval(600)
        )
        let cancelled = try await harness.schedules.cancel(app: harness.app, id: start.schedule.id)
        #expect(cancelled.schedule.state == .cancelled)
        let again = try await harness.schedules.cancel(app: harness.app, id: start.schedule.id)
        #expect(again.schedule.state == .cancelled)
        #expect(
            try await harness.schedules.schedule(app: harness.app, id: start.schedule.id).schedule.state == .cancelled
        )
        await #expect(throws: EngineError.self) {
            _ = try await harness.schedules.cancel(app: harness.app, id: ScheduleID())
        }
        await harness.close()
    }
}
