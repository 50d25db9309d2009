import Foundation
import MarqueeCore
import MarqueeEngine
import Testing

/// A schedule's states and what it may do in each, and the start job a schedule's runs share.
@Suite("Schedule state")
struct ScheduleStateTests {
    @Test(
        """
        only a pending schedule can be cancelled or moved; a running one can be begun again and finished; a \
        finished one is final
        """
    )
    func transitions() {
        let allowed: [ScheduleState: Set<ScheduleState.Transition>] = [
            .pending: [.begin, .cancel, .move],
            .running: [.begin, .finish],
            .succeeded: [], .failed: [], .cancelled: [], .skipped: [],
        ]
        for state in ScheduleState.allCases {
            for transition in ScheduleState.Transition.allCases {
                #expect(state.allows(transition) == allowed[state]?.contains(transition), "\(state) \(transition)")
            }
        }
        #expect(ScheduleState.allCases.filter(\.isFinished) == [.succeeded, .failed, .cancelled, .skipped])
        #expect(ScheduleState.allCases.filter(\.isOutcome) == [.succeeded, .failed, .skipped])
    }

    @Test("a stored broadcast and start read back as they were accepted")
    func actionsRoundTrip() throws {
        let draft = BroadcastDraft(
            event: .end,
            contentState: ["away": 1, "home": 2],
            alert: LiveActivityAlert(
                title: "Full time",
                body: .localized(key: "FT", arguments: ["2", "1"]),
                sound: "default"
            ),
            staleDate: Date(timeIntervalSince1970: 1_795_878_000.5),
            dismissalDate: Date(timeIntervalSince1970: 1_795_879_000),
            relevanceScore: 50,
            priority: .immediate,
            important: true,
            environments: [.sandbox]
        )
        let action = ScheduledAction.broadcast(draft)
        #expect(action.kind == .end)
        let stored = try #require(try jsonRoundTrip(action))
        #expect(stored == action)

        let start = ScheduledAction.start(
            StartRequest(
                environment: .production,
                attributes: ["homeTeam": "Arsenal"],
                contentState: ["home": 0],
                alert: ["body": "Kick-off", "title": "Arsenal v Chelsea"],
                audience: StartAudience(tags: ["arsenal"], tokens: ["ABCD"]),
                inputPushToken: true
            )
        )
        #expect(start.kind == .start)
        #expect(try jsonRoundTrip(start) == start)
    }

    /// Through the view, as the API reads a stored schedule.
    func jsonRoundTrip(_ action: ScheduledAction) throws -> ScheduledAction? {
        let schedule = Schedule(
            appID: AppID(),
            eventID: EventID(),
            kind: action.kind,
            dueAt: Date(),
            request: try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(action.jsonValue)),
            createdAt: Date()
        )
        return ScheduleView(schedule: schedule, eventKey: "e").action
    }

    @Test("an outcome reads back as it was recorded")
    func outcomeRoundTrip() throws {
        let outcome = ScheduleOutcome(startJobs: [JobID(), JobID()], closed: true, skipped: "why")
        #expect(ScheduleOutcome(json: outcome.jsonValue) == outcome)
    }
}
