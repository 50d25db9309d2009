/// What the engine's use cases are tuned by.
public struct EngineConfiguration: Sendable {
    public var channels: ChannelPolicy
    /// How often `ChannelJanitor` sweeps.
    public var janitorInterval: Duration
    /// The most push-to-start registrations one batch may carry.
    public var maximumTokenBatch: Int
    /// The priority policy and budget of channel broadcasts.
    public var broadcasts: BroadcastPolicy
    /// How the job worker leases and runs jobs.
    public var jobs: JobWorkerConfiguration
    /// The defaults of events' timelines.
    public var timeline: TimelinePolicy

    public init(
        channels: ChannelPolicy = ChannelPolicy(),
        janitorInterval: Duration = .seconds(30),
        maximumTokenBatch: Int = 10_000,
        broadcasts: BroadcastPolicy = BroadcastPolicy(),
        jobs: JobWorkerConfiguration = JobWorkerConfiguration(),
        timeline: TimelinePolicy = TimelinePolicy()
    ) {
        self.channels = channels
        self.broadcasts = broadcasts
        self.janitorInterval = janitorInterval
        self.maximumTokenBatch = maximumTokenBatch
        self.jobs = jobs
        self.timeline = timeline
    }
}
