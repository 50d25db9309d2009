import Foundation
import MarqueeCore

/// The decisions of an event's timeline, apart from any I/O: given the event (its planned start,
/// state and timeline settings), the durations that apply, what happened so far and the time, which
/// steps the timeline needs, when each is due, and what to change in the stored steps.
///
/// The steps, in order:
/// 1. `channels`: the event's channels are created `channelLead` before the planned start.
/// 2. `start`: the timeline's start is sent at the planned start.
/// 3. `end`: an end (the last content-state, dismissed at once) is sent `endAfter` after the start
///    (the start step's run, or the planned start until it ran), before Apple's 8-hour limit, unless
///    someone sent an end already.
/// 4. `close`: the event is closed and its channels deleted `deleteChannelsAfter` after the end,
///    whoever sent it.
///
/// Steps that ran (or are running) stay as they are; pending ones follow the event (a new planned
/// start moves them); all pending ones are cancelled when the timeline is turned off or the event
/// is closed or deleted.
public enum EventTimeline {
    /// A step of the timeline; each is stored as a schedule of the same kind.
    public enum Step: String, Sendable, Hashable, CaseIterable {
        case channels
        case start
        case end
        case close

        public var kind: ScheduleKind {
            switch self {
            case .channels: .channels
            case .start: .start
            case .end: .end
            case .close: .close
            }
        }

        public init?(kind: ScheduleKind) {
            switch kind {
            case .channels: self = .channels
            case .start: self = .start
            case .end: self = .end
            case .close: self = .close
            case .broadcast: return nil
            }
        }
    }

    /// How long a Live Activity lives at most: the system ends it after this (`apns-reference.md` §7).
    public static let activityLifetime: TimeInterval = 8 * 3600
    /// How long an ended activity may stay on the Lock Screen.
    public static let lockScreenWindow: TimeInterval = 4 * 3600

    /// The durations one event's timeline runs by: its own overrides, else the server's defaults.
    public struct Durations: Sendable, Hashable {
        public var channelLead: TimeInterval
        public var endAfter: TimeInterval
        public var deleteChannelsAfter: TimeInterval

        public init(channelLead: TimeInterval, endAfter: TimeInterval, deleteChannelsAfter: TimeInterval) {
            self.channelLead = channelLead
            self.endAfter = endAfter
            self.deleteChannelsAfter = deleteChannelsAfter
        }
    }

    /// A stored step, as far as the timeline cares.
    public struct StepRecord: Sendable, Hashable {
        public var id: ScheduleID
        public var state: ScheduleState
        public var dueAt: Date
        public var performedAt: Date?

        public init(id: ScheduleID, state: ScheduleState, dueAt: Date, performedAt: Date? = nil) {
            self.id = id
            self.state = state
            self.dueAt = dueAt
            self.performedAt = performedAt
        }

        public init(_ schedule: Schedule) {
            self.init(id: schedule.id, state: schedule.state, dueAt: schedule.dueAt, performedAt: schedule.performedAt)
        }
    }

    /// What happened so far.
    public struct Facts: Sendable, Hashable {
        /// The stored steps that are not cancelled, one per step at most.
        public var steps: [Step: StepRecord]
        /// When APNs first accepted an end for the event, from the timeline or anyone else.
        public var endSentAt: Date?

        public init(steps: [Step: StepRecord] = [:], endSentAt: Date? = nil) {
            self.steps = steps
            self.endSentAt = endSentAt
        }
    }

    /// When a step is wanted.
    public enum Due: Sendable, Hashable {
        /// Due at this time (now or earlier: at once).
        case at(Date)
        /// Not wanted: the timeline is off, or the event is over. A pending step is cancelled.
        case unwanted
        /// Not needed, for this reason (an end was already sent). A pending step is skipped.
        case notNeeded(String)
    }

    /// A change to the stored steps.
    public enum Change: Sendable, Hashable {
        case create(Step, at: Date)
        case move(ScheduleID, Step, to: Date)
        case cancel(ScheduleID, Step)
        case skip(ScheduleID, Step, reason: String)
    }

    /// Whether a step due now is performed or skipped.
    public enum Decision: Sendable, Hashable {
        case perform
        case skip(String)
    }

    /// Whether the event's timeline runs: asked for, and the event still open.
    public static func isRunning(_ event: Event) -> Bool {
        event.timeline?.automatic == true && (event.state == .scheduled || event.state == .live)
    }

    /// When each step is due.
    public static func plan(event: Event, durations: Durations, facts: Facts) -> [Step: Due] {
        guard isRunning(event) else {
            return Dictionary(uniqueKeysWithValues: Step.allCases.map { ($0, Due.unwanted) })
        }
        let start = event.plannedStart
        // The activity's 8 hours count from when the start went out.
        let started = facts.steps[.start].flatMap { $0.state == .succeeded ? $0.performedAt : nil } ?? start
        let endAt = started.addingTimeInterval(durations.endAfter)
        let ended = facts.endSentAt ?? facts.steps[.end].flatMap { $0.state.isOutcome ? $0.performedAt : nil } ?? endAt
        var plan: [Step: Due] = [
            .channels: .at(start.addingTimeInterval(-durations.channelLead)),
            .start: .at(start),
            .end: .at(endAt),
            .close: .at(ended.addingTimeInterval(durations.deleteChannelsAfter)),
        ]
        if let endSentAt = facts.endSentAt {
            plan[.end] = .notNeeded("an end was already sent at \(Self.format(endSentAt))")
        }
        return plan
    }

    /// What to change in the stored steps so that they follow `plan`.
    public static func changes(event: Event, durations: Durations, facts: Facts) -> [Change] {
        let plan = plan(event: event, durations: durations, facts: facts)
        var changes: [Change] = []
        for step in Step.allCases {
            let due = plan[step] ?? .unwanted
            guard let record = facts.steps[step] else {
                if case .at(let at) = due { changes.append(.create(step, at: at)) }
                continue
            }
            // A step a worker began, or that ran, is what it is.
            guard record.state == .pending else { continue }
            switch due {
            case .at(let at):
                // Stores keep microseconds: a time read back is not moved for a rounding difference.
                if abs(record.dueAt.timeIntervalSince(at)) >= 0.001 { changes.append(.move(record.id, step, to: at)) }
            case .unwanted:
                changes.append(.cancel(record.id, step))
            case .notNeeded(let reason):
                changes.append(.skip(record.id, step, reason: reason))
            }
        }
        return changes
    }

    /// Whether a step that came due is performed: the facts may have changed since it was planned
    /// (an end sent by the producer, the event closed), and a worker checks again before acting.
    public static func decision(for step: Step, event: Event, durations: Durations, facts: Facts) -> Decision {
        guard event.state == .scheduled || event.state == .live else {
            return .skip("the event is \(event.state.rawValue)")
        }
        guard event.timeline?.automatic == true else { return .skip("the event's timeline is no longer automatic") }
        if case .notNeeded(let reason)? = plan(event: event, durations: durations, facts: facts)[step] {
            return .skip(reason)
        }
        return .perform
    }

    /// Whether the event's channels wait for the timeline's `channels` step: the timeline runs and
    /// the lead time has not come. Creating the event, adding an environment and the channel
    /// janitor leave the channels alone until then.
    public static func defersChannels(event: Event, durations: Durations, facts: Facts? = nil, now: Date) -> Bool {
        guard isRunning(event) else { return false }
        if let record = facts?.steps[.channels], record.state != .pending { return false }
        return now < event.plannedStart.addingTimeInterval(-durations.channelLead)
    }

    private static func format(_ date: Date) -> String {
        ISO8601DateFormatter().string(from: date)
    }
}
