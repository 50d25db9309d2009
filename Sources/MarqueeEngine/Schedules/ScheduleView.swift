import MarqueeCore

/// A schedule as the API shows it: with its event's key, and its action and outcome read.
public struct ScheduleView: Sendable, Hashable {
    public var schedule: Schedule
    public var eventKey: String
    /// What it does, for schedules a producer made; `nil` for timeline steps.
    public var action: ScheduledAction?
    public var outcome: ScheduleOutcome?

    public init(schedule: Schedule, eventKey: String) {
        self.schedule = schedule
        self.eventKey = eventKey
        action = schedule.origin == .api ? try? ScheduledAction(kind: schedule.kind, json: schedule.request) : nil
        outcome = schedule.outcome.flatMap(ScheduleOutcome.init(json:))
    }
}
