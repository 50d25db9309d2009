import Foundation
import MarqueeKit
import Testing

/// What the device tells Marquee about each event, and which activity goes when an event has two.
@Suite("Activity census")
struct ActivityCensusTests {
    let start = Date(timeIntervalSince1970: 1_795_000_000)

    func at(_ seconds: Double) -> Date { start.addingTimeInterval(seconds) }

    /// Reconciles and records every decided report as accepted, as the client does after a 200.
    func reconcileAndSend(
        _ census: inout ActivityCensus,
        _ observed: [ObservedActivity],
        liveEvents: Set<String> = [],
        at now: Date
    ) -> ActivityCensus.Decision {
        let decision = census.reconcile(observed, liveEvents: liveEvents, now: now)
        for report in decision.reports { census.recordSent(report, at: now) }
        return decision
    }

    @Test("an active activity is reported showing with its ActivityKit ID, once")
    func showingOnce() {
        var census = ActivityCensus()
        let match = [ObservedActivity(id: "A1", eventKey: "ars-che", state: .active)]
        let first = reconcileAndSend(&census, match, at: at(0))
        #expect(first.reports == [PresenceReport(eventKey: "ars-che", state: .showing, activityID: "A1")])
        #expect(first.activitiesToEnd.isEmpty)
        #expect(reconcileAndSend(&census, match, at: at(60)) == ActivityCensus.Decision())
    }

    @Test("a stale activity is still on screen: it counts as showing, and going stale is no change")
    func staleCountsAsShowing() {
        var census = ActivityCensus()
        _ = reconcileAndSend(&census, [ObservedActivity(id: "A1", eventKey: "ars-che", state: .active)], at: at(0))
        let stale = reconcileAndSend(
            &census,
            [ObservedActivity(id: "A1", eventKey: "ars-che", state: .stale)],
            at: at(60)
        )
        #expect(stale.reports.isEmpty)

        var fresh = ActivityCensus()
        let onlyStale = reconcileAndSend(
            &fresh,
            [ObservedActivity(id: "A1", eventKey: "ars-che", state: .stale)],
            at: at(0)
        )
        #expect(onlyStale.reports == [PresenceReport(eventKey: "ars-che", state: .showing, activityID: "A1")])
    }

    @Test("an ended activity is reported ended; once it is gone from the list, dismissed")
    func endedThenDismissed() {
        var census = ActivityCensus()
        _ = reconcileAndSend(&census, [ObservedActivity(id: "A1", eventKey: "ars-che", state: .active)], at: at(0))
        let ended = reconcileAndSend(
            &census,
            [ObservedActivity(id: "A1", eventKey: "ars-che", state: .ended)],
            at: at(60)
        )
        #expect(ended.reports == [PresenceReport(eventKey: "ars-che", state: .ended)])
        let dismissed = reconcileAndSend(
            &census,
            [ObservedActivity(id: "A1", eventKey: "ars-che", state: .dismissed)],
            at: at(120)
        )
        #expect(dismissed.reports == [PresenceReport(eventKey: "ars-che", state: .dismissed)])
        // ActivityKit lists it no more: still dismissed, nothing new to say.
        #expect(reconcileAndSend(&census, [], at: at(180)).reports.isEmpty)
    }

    @Test("an activity that vanishes while showing was removed by the user: dismissed, never absent")
    func vanishedIsDismissed() {
        var census = ActivityCensus()
        _ = reconcileAndSend(&census, [ObservedActivity(id: "A1", eventKey: "ars-che", state: .active)], at: at(0))
        census.ask(about: ["ars-che"], at: at(30))
        let answer = reconcileAndSend(&census, [], at: at(30))
        #expect(answer.reports == [PresenceReport(eventKey: "ars-che", state: .dismissed)])
    }

    @Test("an event Marquee asked about, with no activity here, is reported absent")
    func absentWhenAsked() {
        var census = ActivityCensus()
        census.ask(about: ["ars-che"], at: at(0))
        let decision = reconcileAndSend(
            &census,
            [ObservedActivity(id: "B1", eventKey: "liv-mci", state: .active)],
            at: at(0)
        )
        #expect(
            decision.reports == [
                PresenceReport(eventKey: "ars-che", state: .absent),
                PresenceReport(eventKey: "liv-mci", state: .showing, activityID: "B1"),
            ]
        )
    }

    @Test("an event the app knows is live, with no activity here, is reported absent once")
    func absentWhenKnownLive() {
        var census = ActivityCensus()
        let first = reconcileAndSend(&census, [], liveEvents: ["ars-che"], at: at(0))
        #expect(first.reports == [PresenceReport(eventKey: "ars-che", state: .absent)])
        #expect(reconcileAndSend(&census, [], liveEvents: ["ars-che"], at: at(60)).reports.isEmpty)
        // The late start arrives: now it shows.
        let shown = reconcileAndSend(
            &census,
            [ObservedActivity(id: "A1", eventKey: "ars-che", state: .active)],
            at: at(90)
        )
        #expect(shown.reports == [PresenceReport(eventKey: "ars-che", state: .showing, activityID: "A1")])
    }

    @Test("nothing is said twice; an event nobody asked about and with no activity is not mentioned")
    func nothingToSayTwice() {
        var census = ActivityCensus()
        #expect(reconcileAndSend(&census, [], at: at(0)) == ActivityCensus.Decision())
        census.ask(about: ["ars-che"], at: at(0))
        #expect(
            reconcileAndSend(&census, [], at: at(0)).reports == [PresenceReport(eventKey: "ars-che", state: .absent)]
        )
        #expect(reconcileAndSend(&census, [], at: at(10)).reports.isEmpty)
        #expect(reconcileAndSend(&census, [], at: at(20)).reports.isEmpty)
    }

    @Test("an ask is answered even when nothing changed: Marquee asks because it does not know")
    func askAnsweredAgain() {
        var census = ActivityCensus()
        let match = [ObservedActivity(id: "A1", eventKey: "ars-che", state: .active)]
        _ = reconcileAndSend(&census, match, at: at(0))
        census.ask(about: ["ars-che"], at: at(60))
        #expect(
            reconcileAndSend(&census, match, at: at(60)).reports == [
                PresenceReport(eventKey: "ars-che", state: .showing, activityID: "A1")
            ]
        )
    }

    @Test("a report that was not accepted is decided again next time")
    func unsentIsDecidedAgain() {
        var census = ActivityCensus()
        census.ask(about: ["ars-che"], at: at(0))
        let first = census.reconcile([], now: at(0))
        #expect(first.reports == [PresenceReport(eventKey: "ars-che", state: .absent)])
        // Not recorded as sent (the request failed): the next reconciliation says it again.
        #expect(census.reconcile([], now: at(30)).reports == first.reports)
    }

    @Test("a second live activity of an event is ended at once; the one seen first is kept and reported")
    func duplicateEnded() {
        var census = ActivityCensus()
        let first = ObservedActivity(id: "A1", eventKey: "ars-che", state: .active)
        _ = reconcileAndSend(&census, [first], at: at(0))
        // A resent start arrives: ActivityKit lists the newcomer (even first).
        let second = ObservedActivity(id: "A2", eventKey: "ars-che", state: .active)
        let decision = reconcileAndSend(&census, [second, first], at: at(60))
        #expect(decision.activitiesToEnd == ["A2"])
        #expect(decision.reports.isEmpty)  // still showing A1, already said
    }

    @Test("two activities of one event there before the app ran: the one listed first is kept")
    func duplicateSeenTogether() {
        var census = ActivityCensus()
        let decision = reconcileAndSend(
            &census,
            [
                ObservedActivity(id: "A1", eventKey: "ars-che", state: .stale),
                ObservedActivity(id: "A2", eventKey: "ars-che", state: .active),
                ObservedActivity(id: "A3", eventKey: "ars-che", state: .active),
                ObservedActivity(id: "B1", eventKey: "liv-mci", state: .active),
            ],
            at: at(0)
        )
        #expect(decision.activitiesToEnd == ["A2", "A3"])
        #expect(
            decision.reports == [
                PresenceReport(eventKey: "ars-che", state: .showing, activityID: "A1"),
                PresenceReport(eventKey: "liv-mci", state: .showing, activityID: "B1"),
            ]
        )
    }

    @Test("an ended activity beside a live one is no second activity: only live ones are ended")
    func endedBesideLive() {
        var census = ActivityCensus()
        let decision = reconcileAndSend(
            &census,
            [
                ObservedActivity(id: "A1", eventKey: "ars-che", state: .ended),
                ObservedActivity(id: "A2", eventKey: "ars-che", state: .active),
            ],
            at: at(0)
        )
        #expect(decision.activitiesToEnd.isEmpty)
        #expect(decision.reports == [PresenceReport(eventKey: "ars-che", state: .showing, activityID: "A2")])
    }

    @Test("an event untouched for longer than its memory is forgotten; one listed or asked is kept")
    func forgetting() {
        var census = ActivityCensus(forgetAfter: .seconds(3600))
        census.ask(about: ["old"], at: at(0))
        _ = reconcileAndSend(&census, [], at: at(0))
        _ = reconcileAndSend(&census, [ObservedActivity(id: "A1", eventKey: "kept", state: .active)], at: at(0))
        _ = reconcileAndSend(&census, [ObservedActivity(id: "A1", eventKey: "kept", state: .active)], at: at(7200))
        #expect(census.lastReport(for: "old") == nil)
        #expect(census.lastReport(for: "kept") == PresenceReport(eventKey: "kept", state: .showing, activityID: "A1"))
    }

    @Test("the census survives a relaunch: encoded and decoded, it says nothing new")
    func codable() throws {
        var census = ActivityCensus()
        let match = [ObservedActivity(id: "A1", eventKey: "ars-che", state: .active)]
        _ = reconcileAndSend(&census, match, at: at(0))
        var restored = try JSONDecoder().decode(ActivityCensus.self, from: JSONEncoder().encode(census))
        #expect(restored == census)
        #expect(reconcileAndSend(&restored, match, at: at(60)).reports.isEmpty)
    }
}
