import Foundation
import MarqueeCore
import MarqueeEngine
import Testing

/// An event's timeline as a specification: which steps it needs, when each is due, and what
/// changes in the stored steps as the event and what happened change. No I/O.
@Suite("Event timeline")
struct EventTimelineTests {
    /// Kick-off at 15:00.
    let kickOff = Date(timeIntervalSince1970: 1_795_878_000)
    let durations = TimelinePolicy().durations(for: EventTimelineSettings(automatic: true))

    func event(automatic: Bool = true, state: EventState = .scheduled, kickOff: Date? = nil) -> Event {
        Event(
            appID: AppID(),
            externalKey: "ars-che",
            title: "Arsenal v Chelsea",
            attributesType: "MatchAttributes",
            environments: [.sandbox],
            storagePolicy: .mostRecentMessageStored,
            plannedStart: kickOff ?? self.kickOff,
            plannedEnd: (kickOff ?? self.kickOff).addingTimeInterval(7200),
            timeline: EventTimelineSettings(
                automatic: automatic,
                start: TimelineStart(attributes: [:], contentState: [:], alert: ["title": "Kick-off"])
            ),
            state: state,
            createdAt: self.kickOff.addingTimeInterval(-86_400)
        )
    }

    func record(_ state: ScheduleState, due: Date, performed: Date? = nil) -> EventTimeline.StepRecord {
        EventTimeline.StepRecord(id: ScheduleID(), state: state, dueAt: due, performedAt: performed)
    }

    @Test(
        """
        by default: channels an hour before kick-off, the start at kick-off, the end 7 h 45 after, the close 4 h \
        after the end
        """
    )
    func defaults() {
        #expect(
            durations
                == EventTimeline.Durations(channelLead: 3600, endAfter: 8 * 3600 - 900, deleteChannelsAfter: 4 * 3600)
        )
        let plan = EventTimeline.plan(event: event(), durations: durations, facts: .init())
        #expect(plan[.channels] == .at(kickOff.addingTimeInterval(-3600)))
        #expect(plan[.start] == .at(kickOff))
        #expect(plan[.end] == .at(kickOff.addingTimeInterval(27_900)))
        #expect(plan[.close] == .at(kickOff.addingTimeInterval(27_900 + 14_400)))
        // A new event's steps are all created.
        #expect(EventTimeline.changes(event: event(), durations: durations, facts: .init()).count == 4)
    }

    @Test("an event's overrides win over the server's defaults; the end never comes after Apple's 8 hours")
    func overrides() {
        let policy = TimelinePolicy(channelLead: 600, endMargin: 60)
        #expect(
            policy.durations(for: nil) == .init(channelLead: 600, endAfter: 8 * 3600 - 60, deleteChannelsAfter: 14_400)
        )
        let own = EventTimelineSettings(
            automatic: true,
            channelLeadSeconds: 7200,
            endAfterSeconds: 3 * 3600,
            deleteChannelsAfterSeconds: 0
        )
        #expect(policy.durations(for: own) == .init(channelLead: 7200, endAfter: 3 * 3600, deleteChannelsAfter: 0))
        #expect(TimelinePolicy(endMargin: 1_000_000).durations(for: nil).endAfter == 60)
    }

    @Test("the end counts from when the start went out, and the close from the end, whoever sent it")
    func countsFromWhatHappened() {
        let startedLate = kickOff.addingTimeInterval(120)
        var facts = EventTimeline.Facts(steps: [.start: record(.succeeded, due: kickOff, performed: startedLate)])
        var plan = EventTimeline.plan(event: event(), durations: durations, facts: facts)
        #expect(plan[.end] == .at(startedLate.addingTimeInterval(27_900)))

        // The producer sent the end at 16:55: no automatic end, and the close 4 h after theirs.
        let producersEnd = kickOff.addingTimeInterval(6900)
        facts.endSentAt = producersEnd
        plan = EventTimeline.plan(event: event(), durations: durations, facts: facts)
        guard case .notNeeded = plan[.end] else {
            Issue.record("the end is still planned: \(String(describing: plan[.end]))")
            return
        }
        #expect(plan[.close] == .at(producersEnd.addingTimeInterval(14_400)))
    }

    @Test("a new planned start moves the steps not yet done, and only those")
    func moving() {
        let channels = record(
            .succeeded,
            due: kickOff.addingTimeInterval(-3600),
            performed: kickOff.addingTimeInterval(-3600)
        )
        let start = record(.pending, due: kickOff)
        let end = record(.pending, due: kickOff.addingTimeInterval(27_900))
        let close = record(.pending, due: kickOff.addingTimeInterval(42_300))
        let facts = EventTimeline.Facts(steps: [.channels: channels, .start: start, .end: end, .close: close])
        #expect(EventTimeline.changes(event: event(), durations: durations, facts: facts).isEmpty)

        let delayed = kickOff.addingTimeInterval(1800)
        let changes = EventTimeline.changes(event: event(kickOff: delayed), durations: durations, facts: facts)
        #expect(
            Set(changes) == [
                .move(start.id, .start, to: delayed),
                .move(end.id, .end, to: delayed.addingTimeInterval(27_900)),
                .move(close.id, .close, to: delayed.addingTimeInterval(42_300)),
            ]
        )
    }

    @Test(
        """
        turning the timeline off, or closing the event, cancels the pending steps; a running or finished step \
        stays as it is
        """
    )
    func cancelling() {
        let running = record(.running, due: kickOff)
        let pending = record(.pending, due: kickOff.addingTimeInterval(27_900))
        let done = record(.succeeded, due: kickOff.addingTimeInterval(-3600))
        let facts = EventTimeline.Facts(steps: [.channels: done, .start: running, .end: pending])
        for stopped in [event(automatic: false), event(state: .ended), event(state: .cancelled)] {
            #expect(
                EventTimeline.changes(event: stopped, durations: durations, facts: facts) == [.cancel(pending.id, .end)]
            )
        }
        // An event that never asked for a timeline plans nothing.
        var plain = event()
        plain.timeline = nil
        #expect(EventTimeline.changes(event: plain, durations: durations, facts: .init()).isEmpty)
    }

    @Test("an end someone sent makes the pending automatic end skipped, with the reason")
    func skippingTheEnd() {
        let end = record(.pending, due: kickOff.addingTimeInterval(27_900))
        let facts = EventTimeline.Facts(steps: [.end: end], endSentAt: kickOff.addingTimeInterval(6000))
        let changes = EventTimeline.changes(event: event(), durations: durations, facts: facts)
        #expect(changes.contains { if case .skip(end.id, .end, _) = $0 { true } else { false } })
        // The worker checks again when the step comes due.
        guard case .skip = EventTimeline.decision(for: .end, event: event(), durations: durations, facts: facts) else {
            Issue.record("the end would be sent again")
            return
        }
        #expect(EventTimeline.decision(for: .end, event: event(), durations: durations, facts: .init()) == .perform)
        guard
            case .skip = EventTimeline.decision(
                for: .start,
                event: event(state: .ended),
                durations: durations,
                facts: .init()
            )
        else {
            Issue.record("a step would run on a closed event")
            return
        }
    }

    @Test("channels wait for the lead time: not made at PUT, nor by the janitor, before it")
    func deferredChannels() {
        let leadTime = kickOff.addingTimeInterval(-3600)
        #expect(
            EventTimeline.defersChannels(event: event(), durations: durations, now: leadTime.addingTimeInterval(-1))
        )
        #expect(!EventTimeline.defersChannels(event: event(), durations: durations, now: leadTime))
        #expect(
            !EventTimeline.defersChannels(
                event: event(automatic: false),
                durations: durations,
                now: leadTime.addingTimeInterval(-1)
            )
        )
        // Once the channels step ran (and the start moved later), channels are kept as usual.
        let ran = EventTimeline.Facts(steps: [.channels: record(.succeeded, due: leadTime, performed: leadTime)])
        #expect(
            !EventTimeline.defersChannels(
                event: event(),
                durations: durations,
                facts: ran,
                now: leadTime.addingTimeInterval(-1)
            )
        )
    }
}
