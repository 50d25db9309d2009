import Foundation
import Logging
import MarqueeCore

/// Keeps an event's stored timeline steps in line with `EventTimeline`: reads what happened (the
/// steps, the event's first accepted end), asks the pure plan what to change, and changes it.
/// Called whenever something the plan depends on changes: the event is put, a step ran, an end
/// was sent. Every change is a conditional store update, so replicas planning at once agree (and
/// a step is created once: the store keeps one per kind).
struct TimelinePlanner: Sendable {
    let store: any BroadcastLogStore & ScheduleStore
    let policy: TimelinePolicy
    let wakeup: JobWakeup
    let clock: any WallClock
    let logger: Logger

    /// What happened so far to the event's timeline.
    func facts(app: App, event: Event) async throws -> EventTimeline.Facts {
        var steps: [EventTimeline.Step: EventTimeline.StepRecord] = [:]
        for schedule in try await store.timelineSteps(appID: app.id, eventID: event.id) {
            if let step = EventTimeline.Step(kind: schedule.kind) { steps[step] = EventTimeline.StepRecord(schedule) }
        }
        let summary = try await store.broadcastSummary(appID: app.id, eventID: event.id)
        return EventTimeline.Facts(steps: steps, endSentAt: summary.firstEndAt)
    }

    /// Brings the stored steps in line with the plan.
    func plan(app: App, event: Event) async throws {
        // An event that never asked for a timeline has nothing to plan (and nothing to read).
        guard event.timeline != nil else { return }
        let facts = try await facts(app: app, event: event)
        let changes = EventTimeline.changes(
            event: event,
            durations: policy.durations(for: event.timeline),
            facts: facts
        )
        let now = clock.now
        var wake = false
        for change in changes {
            switch change {
            case .create(let step, let at):
                let schedule = Schedule(
                    appID: app.id,
                    eventID: event.id,
                    kind: step.kind,
                    origin: .timeline,
                    dueAt: at,
                    createdAt: now
                )
                if try await store.createSchedule(schedule) { wake = wake || at <= now }
            case .move(let id, _, let at):
                if try await store.moveSchedule(appID: app.id, id: id, to: at, at: now) { wake = wake || at <= now }
            case .cancel(let id, _):
                _ = try await store.cancelSchedule(appID: app.id, id: id, state: .cancelled, outcome: nil, at: now)
            case .skip(let id, _, let reason):
                _ = try await store.cancelSchedule(
                    appID: app.id,
                    id: id,
                    state: .skipped,
                    outcome: ScheduleOutcome(skipped: reason).jsonValue,
                    at: now
                )
            }
        }
        if !changes.isEmpty {
            logger.debug(
                "event timeline planned",
                metadata: ["event.id": "\(event.id)", "timeline.changes": "\(changes.count)"]
            )
        }
        if wake { wakeup.signal() }
    }
}
