import Synchronization

/// How a store tells whoever keeps answers of channel-ID reads (`GET /v1/events/{key}/channels/{env}`)
/// in memory that an event's answer may have changed: its channels (created, activated, moved to
/// another state, deleted), the event itself (updated, its state set, deleted) or its timeline's
/// `close` step (whose due time the answer gives as `expiresAt`). A store calls `changed` after the
/// change has committed, in this process; the PostgreSQL store also announces it to every replica
/// with a NOTIFY in the change's own transaction (`PostgresStore.channelAnswersChannel`).
///
/// Observers are called on the writer's task and must be quick (a cache drops entries).
public final class ChannelAnswerChanges: Sendable {
    private let observers = Mutex<[@Sendable (EventID?) -> Void]>([])

    public init() {}

    /// Calls `observer` with the event whose answer may have changed, or `nil` for any event's.
    public func observe(_ observer: @escaping @Sendable (EventID?) -> Void) {
        observers.withLock { $0.append(observer) }
    }

    /// The event's answer may have changed (`nil`: any event's).
    public func changed(_ eventID: EventID?) {
        for observer in observers.withLock({ $0 }) { observer(eventID) }
    }

    /// Whether a change to this schedule can change a channel-ID answer: only a timeline's `close`
    /// step gives one (`expiresAt`).
    public static func concerns(kind: ScheduleKind, origin: ScheduleOrigin) -> Bool {
        kind == .close && origin == .timeline
    }
}
