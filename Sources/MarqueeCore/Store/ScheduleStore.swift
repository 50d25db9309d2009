import Foundation

/// Schedules and the jobs that wake workers for them. Every change of a schedule's state is one
/// conditional update (`ScheduleState.allows`) that changes its job with it, so that the API,
/// the timeline and workers on any replica agree on what happens to it.
public protocol ScheduleStore: Sendable {
    /// Inserts the schedule with its job (`Schedule.job`), together. Returns false, inserting
    /// nothing, for a timeline step of a kind the event already has (one that is not cancelled):
    /// two replicas planning one timeline at once make each step once; and for a timeline step of
    /// an event that has ended or was cancelled: a plan made from an older read of the event (a
    /// step that ran while the event was being closed) cannot bring back the steps the close
    /// cancelled.
    func createSchedule(_ schedule: Schedule) async throws -> Bool
    func schedule(appID: AppID, id: ScheduleID) async throws -> Schedule?
    /// The event's schedules by (`dueAt`, `id`), those after `after` when given (keyset pagination),
    /// at most `limit`.
    func schedules(appID: AppID, eventID: EventID, after: ScheduleListPosition?, limit: Int) async throws -> [Schedule]
    /// The event's timeline steps that are not cancelled: one per kind at most.
    func timelineSteps(appID: AppID, eventID: EventID) async throws -> [Schedule]

    /// A pending schedule becomes `state` (`cancelled` or `skipped`, with `outcome` saying why) and
    /// its job is cancelled. Returns the schedule as it is after the call and whether this call
    /// changed it (false: it was not pending); `nil` if the app has no such schedule.
    func cancelSchedule(
        appID: AppID,
        id: ScheduleID,
        state: ScheduleState,
        outcome: JSONValue?,
        at: Date
    ) async throws -> (schedule: Schedule, changed: Bool)?
    /// Cancels every pending schedule of the event, with their jobs; returns how many.
    @discardableResult
    func cancelSchedules(appID: AppID, eventID: EventID, at: Date) async throws -> Int
    /// A pending schedule (and its job, unless a worker holds it) becomes due at `dueAt`; false if
    /// it was not pending.
    func moveSchedule(appID: AppID, id: ScheduleID, to dueAt: Date, at: Date) async throws -> Bool

    /// A worker begins the schedule: `pending` and due by `now`, or `running` (taken over from a
    /// worker that stopped), becomes `running` with one more attempt. Returns the schedule as it is
    /// after the call: unchanged when it was finished or is not due yet; `nil` if there is none.
    func beginSchedule(appID: AppID, id: ScheduleID, now: Date) async throws -> Schedule?
    /// A running schedule becomes `state` (`succeeded`, `failed` or `skipped`) with its outcome;
    /// false if it was not running.
    func finishSchedule(
        appID: AppID,
        id: ScheduleID,
        state: ScheduleState,
        outcome: JSONValue?,
        error: String?,
        at: Date
    ) async throws -> Bool
}
