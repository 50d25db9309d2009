/// How a replica's late-join pump drains the pending-start queue.
public struct LateJoinConfiguration: Sendable, Hashable {
    /// Late-join starts a replica creates per second at most (a second's worth may go at once):
    /// a quiet match's late joiners go within the second, a storm of registrations after an app
    /// release is spread out and leaves the job worker and APNs to broadcasts.
    public var ratePerSecond: Int
    /// Pending starts claimed at once at most (one start job per event and environment among them).
    public var batchSize: Int
    /// How often the pump looks at the queue when nothing wakes it (a registration in this process,
    /// NOTIFY on PostgreSQL), and how soon a row waiting for its event's start job is looked at again.
    public var pollInterval: Duration
    /// How long a claim holds: a pump that stops between claiming and enqueuing the start leaves
    /// its rows to another pump after this.
    public var claimDuration: Duration

    public init(
        ratePerSecond: Int = 200,
        batchSize: Int = 1000,
        pollInterval: Duration = .seconds(1),
        claimDuration: Duration = .seconds(30)
    ) {
        self.ratePerSecond = max(1, ratePerSecond)
        self.batchSize = min(max(1, batchSize), StartService.maximumAudienceList)
        self.pollInterval = pollInterval
        self.claimDuration = claimDuration
    }
}
