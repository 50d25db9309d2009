import Foundation
import Logging
import MarqueeCore

/// Starts, broadcasts and ends scheduled for a time: checked now exactly as the immediate call
/// would check them (a bad request is refused when it is made, not when it is due), stored with
/// the job that wakes a worker then, listed, read and cancelled. `ScheduleRunner` performs them.
public struct ScheduleService: Sendable {
    let store: any EventStore & ScheduleStore
    let starts: StartService
    let broadcasts: BroadcastService
    let events: EventService
    let wakeup: JobWakeup
    let clock: any WallClock
    let logger: Logger

    /// How far in the past `at` may be (clocks differ a little): such a schedule is due at once.
    public static let pastTolerance: TimeInterval = 60

    /// Schedules a start at `at`.
    public func scheduleStart(app: App, eventKey: String, request: StartRequest, at: Date) async throws -> ScheduleView
    {
        try Self.checkTime(at, now: clock.now)
        let event = try await starts.validate(app: app, eventKey: eventKey, request: request)
        return try await create(.start(request), app: app, event: event, at: at)
    }

    /// Schedules a broadcast (an update, or the end) at `at`.
    public func scheduleBroadcast(
        app: App,
        eventKey: String,
        draft: BroadcastDraft,
        at: Date
    ) async throws -> ScheduleView {
        try Self.checkTime(at, now: clock.now)
        let (target, _) = try await broadcasts.validate(app: app, key: eventKey, draft: draft)
        let event = target.event
        return try await create(.broadcast(draft), app: app, event: event, at: at)
    }

    public func schedule(app: App, id: ScheduleID) async throws -> ScheduleView {
        guard let schedule = try await store.schedule(appID: app.id, id: id) else {
            throw EngineError.notFound(resource: "schedule", id: id.publicID)
        }
        return try await view(app: app, schedule)
    }

    /// A page of the event's schedules (its timeline's steps too), by due time.
    public func schedules(
        app: App,
        eventKey: String,
        after: ScheduleListPosition?,
        limit: Int
    ) async throws -> [ScheduleView] {
        let event = try await events.event(app: app, key: eventKey)
        return try await store.schedules(appID: app.id, eventID: event.id, after: after, limit: limit).map {
            ScheduleView(schedule: $0, eventKey: event.externalKey)
        }
    }

    /// Cancels a pending schedule; cancelling a cancelled one answers it again. A schedule a worker
    /// began, or that ran, cannot be cancelled; nor can a step of the event's timeline (turning the
    /// timeline off cancels its steps).
    public func cancel(app: App, id: ScheduleID) async throws -> ScheduleView {
        guard let schedule = try await store.schedule(appID: app.id, id: id) else {
            throw EngineError.notFound(resource: "schedule", id: id.publicID)
        }
        guard schedule.origin == .api else {
            throw EngineError.scheduleConflict(
                """
                schedule \(id.publicID) is a step of the event's timeline: put the event with timeline.automatic \
                false to stop the timeline
                """
            )
        }
        guard
            let result = try await store.cancelSchedule(
                appID: app.id,
                id: id,
                state: .cancelled,
                outcome: nil,
                at: clock.now
            )
        else {
            throw EngineError.notFound(resource: "schedule", id: id.publicID)
        }
        if !result.changed && result.schedule.state != .cancelled {
            throw EngineError.scheduleConflict(
                """
                schedule \(id.publicID) is \(result.schedule.state.rawValue): it has already run or been \
                cancelled, so there is nothing to cancel
                """
            )
        }
        return try await view(app: app, result.schedule)
    }

    // MARK: Steps

    /// `at` may lie in the past by `pastTolerance` at most.
    static func checkTime(_ at: Date, now: Date) throws(EngineError) {
        if at < now.addingTimeInterval(-pastTolerance) {
            throw .invalidInput([
                FieldError(
                    "/at",
                    """
                    is in the past; leave out at to do it now, or give a time within \(Int(pastTolerance)) \
                    seconds of now or later
                    """
                )
            ])
        }
    }

    private func create(_ action: ScheduledAction, app: App, event: Event, at: Date) async throws -> ScheduleView {
        let now = clock.now
        let schedule = Schedule(
            appID: app.id,
            eventID: event.id,
            kind: action.kind,
            origin: .api,
            dueAt: at,
            request: action.jsonValue,
            createdAt: now
        )
        _ = try await store.createSchedule(schedule)
        if at <= now { wakeup.signal() }
        logger.debug(
            "schedule created",
            metadata: [
                "schedule.id": "\(schedule.id.publicID)", "schedule.kind": "\(schedule.kind.rawValue)",
                "event.key": "\(event.externalKey)",
            ]
        )
        return ScheduleView(schedule: schedule, eventKey: event.externalKey)
    }

    private func view(app: App, _ schedule: Schedule) async throws -> ScheduleView {
        let event = try await store.event(appID: app.id, id: schedule.eventID)
        return ScheduleView(schedule: schedule, eventKey: event?.externalKey ?? "")
    }
}
