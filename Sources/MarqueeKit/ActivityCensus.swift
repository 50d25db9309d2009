import Foundation

/// Decides what the device tells Marquee and which activities go: given what ActivityKit lists
/// now, the events Marquee asked about, the events the app knows are live, and what was reported
/// before. Pure: no I/O, time is handed in; the client sends what it decides and records what went.
///
/// The rules, per event:
/// - a live activity (active or stale: stale is still on screen) means `showing`, with the ID of
///   the one first seen; every other live activity of the same event is a second activity and is
///   ended at once (under `resend` a device may get a start twice; the user must not see it
///   twice);
/// - no live one but an ended one: `ended`; only dismissed ones: `dismissed`;
/// - none listed, but one was seen before: `dismissed` (ActivityKit lists no activity once it is
///   removed from the Lock Screen; the user's swipe is no reason for Marquee to start it again);
/// - none ever seen, for an event Marquee asked about or the app knows is live: `absent`;
/// - a state is reported once per change; an ask is answered even when nothing changed (Marquee
///   asks because it does not know).
/// An event not touched for `forgetAfter` is forgotten, so the memory stays small.
public struct ActivityCensus: Sendable, Equatable, Codable {
    /// How long an event is remembered after it was last asked about, listed or reported.
    public var forgetAfter: Duration
    private(set) var events: [String: EventMemory] = [:]
    /// When each listed activity was first seen (by ID): the first of an event's is the one kept.
    private(set) var firstSeen: [String: Date] = [:]

    struct EventMemory: Sendable, Equatable, Codable {
        /// Marquee asked, and no report has answered yet.
        var askPending = false
        /// Marquee asked at some time, or the app said the event is live: no activity is `absent`.
        var concernsDevice = false
        /// An activity of the event was seen on this device.
        var hadActivity = false
        var lastReport: PresenceReport?
        var touchedAt: Date
    }

    /// What to do now.
    public struct Decision: Sendable, Equatable {
        /// The reports to send, in event-key order.
        public var reports: [PresenceReport]
        /// The IDs of second activities of an event, to end at once.
        public var activitiesToEnd: [String]

        public init(reports: [PresenceReport] = [], activitiesToEnd: [String] = []) {
            self.reports = reports
            self.activitiesToEnd = activitiesToEnd
        }
    }

    public init(forgetAfter: Duration = .seconds(7 * 24 * 3600)) {
        self.forgetAfter = forgetAfter
    }

    /// Marquee asked about these events (its background push): each gets an answer at the next
    /// `reconcile`, changed or not.
    public mutating func ask(about eventKeys: some Sequence<String>, at now: Date) {
        for eventKey in eventKeys {
            var memory = events[eventKey] ?? EventMemory(touchedAt: now)
            memory.askPending = true
            memory.concernsDevice = true
            memory.touchedAt = now
            events[eventKey] = memory
        }
    }

    /// Decides from what ActivityKit lists now (in its order) and the events the app knows are
    /// live. It remembers what it saw; what it decides to report is remembered only once sent
    /// (`recordSent`), so a report that failed is decided again next time.
    public mutating func reconcile(_ observed: [ObservedActivity], liveEvents: Set<String> = [], now: Date) -> Decision
    {
        let listedIDs = Set(observed.map(\.id))
        firstSeen = firstSeen.filter { listedIDs.contains($0.key) }
        for activity in observed where firstSeen[activity.id] == nil {
            firstSeen[activity.id] = now
        }
        for eventKey in liveEvents {
            var memory = events[eventKey] ?? EventMemory(touchedAt: now)
            memory.concernsDevice = true
            memory.touchedAt = now
            events[eventKey] = memory
        }

        // The listed order breaks ties between activities first seen together (both there before
        // the app ran): ActivityKit lists them in the order they began.
        let position = Dictionary(observed.enumerated().map { ($0.element.id, $0.offset) }) { first, _ in first }
        let byEvent = Dictionary(grouping: observed, by: \.eventKey)
        var decision = Decision()
        for eventKey in Set(byEvent.keys).union(events.keys).sorted() {
            var memory = events[eventKey] ?? EventMemory(touchedAt: now)
            let listed = byEvent[eventKey] ?? []
            if !listed.isEmpty {
                memory.hadActivity = true
                memory.touchedAt = now
            }
            let live = listed.filter(\.state.isLive).sorted { left, right in
                let leftSeen = firstSeen[left.id] ?? now
                let rightSeen = firstSeen[right.id] ?? now
                return leftSeen != rightSeen
                    ? leftSeen < rightSeen : position[left.id, default: 0] < position[right.id, default: 0]
            }
            decision.activitiesToEnd += live.dropFirst().map(\.id)

            let current: PresenceReport?
            if let kept = live.first {
                current = PresenceReport(eventKey: eventKey, state: .showing, activityID: kept.id)
            } else if listed.contains(where: { $0.state == .ended }) {
                current = PresenceReport(eventKey: eventKey, state: .ended)
            } else if memory.hadActivity {
                current = PresenceReport(eventKey: eventKey, state: .dismissed)
            } else if memory.concernsDevice {
                current = PresenceReport(eventKey: eventKey, state: .absent)
            } else {
                current = nil
            }
            if let current, memory.askPending || current != memory.lastReport {
                decision.reports.append(current)
            }

            if listed.isEmpty, !memory.askPending, now.timeIntervalSince(memory.touchedAt) > forgetAfter.seconds {
                events[eventKey] = nil
            } else {
                events[eventKey] = memory
            }
        }
        return decision
    }

    /// Marquee accepted `report`: it is what the device has said about its event.
    public mutating func recordSent(_ report: PresenceReport, at now: Date) {
        var memory = events[report.eventKey] ?? EventMemory(touchedAt: now)
        memory.lastReport = report
        memory.askPending = false
        memory.touchedAt = now
        events[report.eventKey] = memory
    }

    /// What was last reported for `eventKey` and accepted.
    public func lastReport(for eventKey: String) -> PresenceReport? {
        events[eventKey]?.lastReport
    }
}

extension Duration {
    /// In seconds, as Foundation's dates count.
    var seconds: TimeInterval {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
