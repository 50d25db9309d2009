/// Where a schedule is. It moves forward only:
///
/// ```
/// pending ──begin──▶ running ──finish──▶ succeeded | failed | skipped
///    │  ╰──move (a new due time)──╮
///    ├──cancel──▶ cancelled       │
///    ├──skip────▶ skipped         │
///    ╰◀───────────────────────────╯
/// ```
///
/// Only a pending schedule can be cancelled, skipped or moved: once a worker began it, the action
/// may already be under way, and whether it happened is for the worker to record. A running
/// schedule can be begun again (a worker that stopped mid-way is replaced after its lease lapses),
/// which is why every action is idempotent on the schedule's ID.
public enum ScheduleState: String, Sendable, Hashable, Codable, CaseIterable {
    /// Waiting for its time.
    case pending
    /// A worker began it.
    case running
    /// Done: the outcome says what happened.
    case succeeded
    /// The action was refused or could not be done (the event closed, APNs refused everywhere);
    /// `lastError` and the outcome say why.
    case failed
    /// Cancelled before its time (`DELETE /v1/schedules/{id}`, the event closed, the timeline
    /// turned off).
    case cancelled
    /// Not needed when its time came, or before: an end someone else already sent.
    case skipped

    public var isFinished: Bool { !(self == .pending || self == .running) }

    /// A change of a schedule's state.
    public enum Transition: Sendable, Hashable, CaseIterable {
        /// A worker takes it up (or takes it over from a worker that stopped).
        case begin
        /// A worker records what came of it: succeeded, failed or skipped.
        case finish
        /// Nobody will perform it: cancelled or skipped before its time.
        case cancel
        /// Its due time changes.
        case move
    }

    /// Whether `transition` may happen in this state. The stores apply the same rule in their
    /// conditional updates, so that concurrent callers agree.
    public func allows(_ transition: Transition) -> Bool {
        switch (self, transition) {
        case (.pending, .begin), (.running, .begin): true
        case (.running, .finish): true
        case (.pending, .cancel), (.pending, .move): true
        default: false
        }
    }

    /// Whether a worker may record this state as the end of a run.
    public var isOutcome: Bool { self == .succeeded || self == .failed || self == .skipped }
}
