/// Everything Marquee keeps, behind one contract that the PostgreSQL and the embedded SQLite store
/// both fulfil and one contract suite checks. Every operation is scoped by app except the few that
/// say why not (authentication by API-key prefix, job leasing, purging expired keys).
public protocol MarqueeStore:
    AppStore, EventStore, ChannelStore, TokenStore, ActivityStore, JobStore, DeliveryStore, IdempotencyStore,
    BroadcastLogStore, ScheduleStore, PendingStartStore, PresenceStore, StartConfirmationStore
{
    /// Applies pending migrations; refuses if an applied migration was edited.
    func migrate() async throws
}
