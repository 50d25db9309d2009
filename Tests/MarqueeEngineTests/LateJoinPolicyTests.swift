import Foundation
import MarqueeCore
import Testing

@testable import MarqueeEngine

/// Who a start's late joiners are, when an event takes them, and how fast they go: the pure
/// decisions behind the late-join queue and pump.
@Suite("Late-join decisions")
struct LateJoinPolicyTests {
    let now = Date(timeIntervalSince1970: 1_767_225_600)

    func request(
        _ audience: StartAudience = StartAudience(),
        _ choice: LateJoinChoice = LateJoinChoice()
    ) -> StartRequest {
        StartRequest(
            environment: .sandbox,
            attributes: ["homeTeam": "Arsenal"],
            contentState: ["homeScore": 0],
            alert: ["title": "Kick-off", "body": "Arsenal v Chelsea"],
            audience: audience,
            lateJoiners: choice
        )
    }

    func makeEvent() -> Event {
        Event(
            appID: AppID(),
            externalKey: "match",
            title: "Final",
            attributesType: "MatchAttributes",
            environments: [.sandbox],
            storagePolicy: .mostRecentMessageStored,
            plannedStart: now,
            plannedEnd: now.addingTimeInterval(7200),
            createdAt: now
        )
    }

    @Test("on by default for the whole environment and for tags, untouched by user IDs or tokens, off when asked")
    func defaults() {
        #expect(LateJoinPolicy.decision(for: request()) == .on(tags: []))
        #expect(LateJoinPolicy.decision(for: request(StartAudience(tags: ["arsenal"]))) == .on(tags: ["arsenal"]))
        #expect(LateJoinPolicy.decision(for: request(StartAudience(userIDs: ["u1"]))) == .unchanged)
        #expect(LateJoinPolicy.decision(for: request(StartAudience(tokens: ["ab"]))) == .unchanged)
        #expect(
            LateJoinPolicy.decision(for: request(StartAudience(tags: ["arsenal"]), LateJoinChoice(enabled: false)))
                == .off
        )
        #expect(
            LateJoinPolicy.decision(for: request(StartAudience(userIDs: ["u1"]), LateJoinChoice(enabled: false)))
                == .off
        )
    }

    @Test("a list audience cannot turn late joining on; the offer carries the tags and the late joiners' alert")
    func offers() throws {
        #expect(
            LateJoinPolicy.errors(in: request(StartAudience(userIDs: ["u1"]), LateJoinChoice(enabled: true))).map(
                \.pointer
            ) == ["/lateJoiners/enabled"]
        )
        #expect(LateJoinPolicy.errors(in: request(StartAudience(tags: ["a"]), LateJoinChoice(enabled: true))).isEmpty)

        let event = makeEvent()
        let alert: JSONObject = ["title": "Join the match", "body": "It is 1–0"]
        let tagged = try #require(
            LateJoinPolicy.offer(
                for: request(StartAudience(tags: ["arsenal"]), LateJoinChoice(alert: alert)),
                event: event,
                jobID: JobID(),
                at: now
            )
        )
        #expect(tagged.enabled && !tagged.everyone && tagged.tags == ["arsenal"] && tagged.alert == alert)
        let everyone = try #require(LateJoinPolicy.offer(for: request(), event: event, jobID: JobID(), at: now))
        #expect(everyone.enabled && everyone.everyone && everyone.alert == nil)
        let off = try #require(
            LateJoinPolicy.offer(
                for: request(StartAudience(), LateJoinChoice(enabled: false)),
                event: event,
                jobID: JobID(),
                at: now
            )
        )
        #expect(!off.enabled)
        #expect(
            LateJoinPolicy.offer(for: request(StartAudience(userIDs: ["u1"])), event: event, jobID: JobID(), at: now)
                == nil
        )
    }

    @Test("an event takes late joiners once started and until it ends, unless it turned them off")
    func liveness() {
        var event = makeEvent()
        #expect(!LateJoinPolicy.takesLateJoiners(event, hasStarted: false))
        #expect(LateJoinPolicy.takesLateJoiners(event, hasStarted: true))
        event.state = .live
        #expect(LateJoinPolicy.takesLateJoiners(event, hasStarted: false))
        event.lateJoiners = false
        #expect(!LateJoinPolicy.takesLateJoiners(event, hasStarted: true))
        event.lateJoiners = true
        for state in [EventState.ended, .cancelled] {
            event.state = state
            #expect(!LateJoinPolicy.takesLateJoiners(event, hasStarted: true))
        }
    }

    @Test("the rate lets a second's worth go at once, then refills at the rate on the injected clock")
    func rate() {
        var rate = LateJoinRate(ratePerSecond: 100, now: now)
        #expect(rate.allowance(now: now) == 100)
        rate.spend(100, now: now)
        #expect(rate.allowance(now: now) == 0)
        #expect(rate.wait(now: now) == .milliseconds(10))
        #expect(rate.allowance(now: now.addingTimeInterval(0.25)) == 25)
        rate.spend(25, now: now.addingTimeInterval(0.25))
        // Idle for a minute: still one second's worth, never more.
        #expect(rate.allowance(now: now.addingTimeInterval(60)) == 100)
        #expect(rate.wait(now: now.addingTimeInterval(60)) == .zero)
        // Spending more than there is (a claim counted after the fact) leaves nothing, not a debt.
        rate.spend(500, now: now.addingTimeInterval(60))
        #expect(rate.allowance(now: now.addingTimeInterval(60.5)) == 50)
    }

    @Test("claims are started per event and environment, in the order of their oldest")
    func groups() {
        let app = AppID()
        let (first, second) = (EventID(), EventID())
        func pending(_ id: Int64, _ event: EventID, _ environment: APNSEnvironment = .sandbox) -> PendingStart {
            PendingStart(
                id: id,
                appID: app,
                eventID: event,
                environment: environment,
                tokenRowID: id,
                token: "aa",
                reason: .lateJoin,
                pendingSince: now
            )
        }
        let groups = LateJoinPump.groups([
            pending(1, second), pending(2, first), pending(3, second), pending(4, second, .production),
        ])
        #expect(groups.map { $0.map(\.id) } == [[1, 3], [2], [4]])
    }
}
