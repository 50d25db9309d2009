import CoreMetrics
import MarqueeCore

/// What the engine's use cases are tuned by.
public struct EngineConfiguration: Sendable {
    public var channels: ChannelPolicy
    /// How often `ChannelJanitor` sweeps.
    public var janitorInterval: Duration
    /// How often `FunnelReporter` counts the live events' funnels into the metrics; zero: never.
    public var funnelMetricsInterval: Duration
    /// The most push-to-start registrations one batch may carry.
    public var maximumTokenBatch: Int
    /// How many statements of single devices' registrations may be in flight at once; those that
    /// arrive while all are busy share the next (`RegistrationCoalescer`).
    public var registrationWriters: Int
    /// The priority policy and budget of channel broadcasts.
    public var broadcasts: BroadcastPolicy
    /// How the job worker leases and runs jobs.
    public var jobs: JobWorkerConfiguration
    /// Where the engine's metrics go, and its APNs clients' (job progress, channel quota, broadcast
    /// latency, pushes): swift-metrics' global factory unless the application passes its own.
    public var metricsFactory: any MetricsFactory
    /// The defaults of events' timelines.
    public var timeline: TimelinePolicy
    /// How long an authenticated API key and its app are remembered (`CredentialCache`); zero
    /// reads them from the store on every request.
    public var credentialLifetime: Duration
    /// The most channel-ID answers kept in memory (`ChannelAnswerCache`); zero reads them from the
    /// store on every request.
    public var channelAnswerCacheSize: Int
    /// How often one device may report what it shows for one event.
    public var presenceReports: PresenceRateBound
    /// How the late-join pump drains the pending-start queue.
    public var lateJoiners: LateJoinConfiguration

    public init(
        channels: ChannelPolicy = ChannelPolicy(),
        janitorInterval: Duration = .seconds(30),
        funnelMetricsInterval: Duration = .seconds(60),
        maximumTokenBatch: Int = 10_000,
        registrationWriters: Int = 2,
        broadcasts: BroadcastPolicy = BroadcastPolicy(),
        jobs: JobWorkerConfiguration = JobWorkerConfiguration(),
        timeline: TimelinePolicy = TimelinePolicy(),
        credentialLifetime: Duration = .seconds(5),
        channelAnswerCacheSize: Int = 10_000,
        lateJoiners: LateJoinConfiguration = LateJoinConfiguration(),
        presenceReports: PresenceRateBound = .perMinute(10),
        metricsFactory: any MetricsFactory = MetricsSystem.factory
    ) {
        self.channels = channels
        self.broadcasts = broadcasts
        self.janitorInterval = janitorInterval
        self.funnelMetricsInterval = funnelMetricsInterval
        self.maximumTokenBatch = maximumTokenBatch
        self.registrationWriters = registrationWriters
        self.jobs = jobs
        self.metricsFactory = metricsFactory
        self.timeline = timeline
        self.credentialLifetime = credentialLifetime
        self.channelAnswerCacheSize = channelAnswerCacheSize
        self.presenceReports = presenceReports
        self.lateJoiners = lateJoiners
    }
}
