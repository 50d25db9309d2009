import Logging
import MarqueeCore
import NIOCore

/// Marquee's use cases over one store and APNs, assembled once: the server calls them, knowing no
/// SQL; they know no HTTP. Its long-lived parts (`clients`, `janitor`, `funnelReporter`) are services to run.
public struct MarqueeEngine: Sendable {
    public let store: any MarqueeStore
    public let clients: APNSClientRegistry
    public let apps: AppAdministration
    public let channels: ChannelLifecycle
    public let reconciler: ChannelReconciler
    public let events: EventService
    public let broadcasts: BroadcastService
    public let tokens: TokenRegistry
    /// What devices say they show, and the events' funnels.
    public let presence: PresenceService
    public let janitor: ChannelJanitor
    /// Counts the live events' funnels into the metrics: a service to run.
    public let funnelReporter: FunnelReporter
    public let idempotency: IdempotencyKeys
    public let starts: StartService
    /// Starts, broadcasts and ends scheduled for later.
    public let schedules: ScheduleService
    /// This replica's job worker: a service to run.
    public let worker: JobWorker
    /// Wakes the worker; the server also signals it on PostgreSQL notifications.
    public let wakeup: JobWakeup
    /// This replica's late-join pump: a service to run.
    public let lateJoiners: LateJoinPump
    /// Wakes the late-join pump (a registration queued late joiners); the server also signals it
    /// on PostgreSQL notifications.
    public let lateJoinWakeup: JobWakeup
    public let configuration: EngineConfiguration

    public init(
        store: any MarqueeStore,
        target: APNSTarget,
        provisioner: any APNSAccountProvisioner = AppleAPNSAccount(),
        configuration: EngineConfiguration = EngineConfiguration(),
        eventLoopGroup: any EventLoopGroup,
        clock: any WallClock,
        logger: Logger
    ) {
        self.store = store
        self.configuration = configuration
        // One wakeup for the job worker, one for the late-join pump (a registration signals it).
        let (wakeup, lateJoinWakeup) = (JobWakeup(clock: clock), JobWakeup(clock: clock))
        (self.wakeup, self.lateJoinWakeup) = (wakeup, lateJoinWakeup)
        clients = APNSClientRegistry(
            store: store,
            target: target,
            eventLoopGroup: eventLoopGroup,
            clock: clock,
            logger: logger,
            metricsFactory: configuration.metricsFactory
        )
        apps = AppAdministration(
            store: store,
            provisioner: provisioner,
            credentialLifetime: configuration.credentialLifetime,
            clock: clock,
            logger: logger
        )
        (channels, reconciler, janitor) = Self.makeChannels(
            store: store,
            clients: clients,
            configuration: configuration,
            clock: clock,
            logger: logger
        )
        funnelReporter = FunnelReporter(
            store: store,
            interval: configuration.funnelMetricsInterval,
            clock: clock,
            logger: logger,
            metricsFactory: configuration.metricsFactory
        )
        let timeline = TimelinePlanner(
            store: store,
            policy: configuration.timeline,
            wakeup: wakeup,
            clock: clock,
            logger: logger
        )
        (events, broadcasts) = Self.makeEvents(
            store: store,
            clients: clients,
            channels: channels,
            timeline: timeline,
            wakeup: wakeup,
            configuration: configuration,
            clock: clock,
            logger: logger
        )
        tokens = TokenRegistry(
            store: store,
            maximumBatchSize: configuration.maximumTokenBatch,
            registrationWriters: configuration.registrationWriters,
            lateJoinWakeup: lateJoinWakeup,
            clock: clock,
            logger: logger
        )
        presence = PresenceService(store: store, bound: configuration.presenceReports, clock: clock, logger: logger)
        idempotency = IdempotencyKeys(store: store, clock: clock)
        (starts, lateJoiners, schedules) = Self.makeStarts(
            store: store,
            parts: (broadcasts: broadcasts, events: events),
            wakeups: (jobs: wakeup, lateJoiners: lateJoinWakeup),
            configuration: configuration,
            clock: clock,
            logger: logger
        )
        worker = Self.makeWorker(
            store: store,
            clients: clients,
            parts: (channels: channels, events: events, broadcasts: broadcasts, starts: starts, timeline: timeline),
            wakeups: (jobs: wakeup, lateJoiners: lateJoinWakeup),
            configuration: configuration,
            clock: clock,
            logger: logger
        )
    }

    /// Events, with their channel-ID answers cached (forgotten on every committed change the store
    /// announces), and the broadcasts to them.
    private static func makeEvents(
        store: any MarqueeStore,
        clients: APNSClientRegistry,
        channels: ChannelLifecycle,
        timeline: TimelinePlanner,
        wakeup: JobWakeup,
        configuration: EngineConfiguration,
        clock: any WallClock,
        logger: Logger
    ) -> (EventService, BroadcastService) {
        let channelAnswers = ChannelAnswerCache(capacity: configuration.channelAnswerCacheSize)
        store.channelAnswerChanges.observe { [weak channelAnswers] eventID in channelAnswers?.forget(eventID: eventID) }
        let events = EventService(
            store: store,
            clients: clients,
            channels: channels,
            timeline: timeline,
            channelAnswers: channelAnswers,
            clock: clock,
            logger: logger
        )
        let broadcasts = BroadcastService(
            store: store,
            clients: clients,
            events: events,
            policy: configuration.broadcasts,
            activityUpdates: ActivityUpdateService(store: store, wakeup: wakeup, clock: clock, logger: logger),
            timeline: timeline,
            clock: clock,
            logger: logger,
            metricsFactory: configuration.metricsFactory
        )
        return (events, broadcasts)
    }

    /// This replica's job worker with a handler per kind of job: start fan-outs and their
    /// confirmations, activity updates, schedules.
    private static func makeWorker(
        store: any MarqueeStore,
        clients: APNSClientRegistry,
        parts: (
            channels: ChannelLifecycle, events: EventService, broadcasts: BroadcastService, starts: StartService,
            timeline: TimelinePlanner
        ),
        wakeups: (jobs: JobWakeup, lateJoiners: JobWakeup),
        configuration: EngineConfiguration,
        clock: any WallClock,
        logger: Logger
    ) -> JobWorker {
        let runner = FanOutRunner(
            store: store,
            configuration: configuration.jobs,
            clock: clock,
            logger: logger,
            metrics: JobMetrics(factory: configuration.metricsFactory)
        )
        return JobWorker(
            store: store,
            handlers: [
                StartFanOutHandler(store: store, clients: clients, runner: runner),
                StartConfirmationHandler(
                    store: store,
                    clients: clients,
                    rules: configuration.jobs.confirmation,
                    configuration: configuration.jobs,
                    pendingStartWakeup: wakeups.lateJoiners,
                    clock: clock,
                    logger: logger,
                    metrics: ConfirmationMetrics(factory: configuration.metricsFactory)
                ),
                ActivityUpdateHandler(
                    store: store,
                    clients: clients,
                    runner: runner,
                    budget: configuration.broadcasts.activityBudget
                ),
                ScheduleRunner(
                    store: store,
                    starts: parts.starts,
                    broadcasts: parts.broadcasts,
                    events: parts.events,
                    channels: parts.channels,
                    timeline: parts.timeline,
                    configuration: configuration.jobs,
                    clock: clock,
                    logger: logger
                ),
            ],
            configuration: configuration.jobs,
            wakeup: wakeups.jobs,
            clock: clock,
            logger: logger
        )
    }

    /// Channels at APNs and in the store: their lifecycle, the reconciliation with APNs, and the
    /// janitor that finishes what a crash or an outage left.
    private static func makeChannels(
        store: any MarqueeStore,
        clients: APNSClientRegistry,
        configuration: EngineConfiguration,
        clock: any WallClock,
        logger: Logger
    ) -> (ChannelLifecycle, ChannelReconciler, ChannelJanitor) {
        let channels = ChannelLifecycle(
            store: store,
            clients: clients,
            policy: configuration.channels,
            clock: clock,
            logger: logger,
            metricsFactory: configuration.metricsFactory
        )
        let reconciler = ChannelReconciler(
            store: store,
            clients: clients,
            lifecycle: channels,
            policy: configuration.channels,
            clock: clock,
            logger: logger
        )
        let janitor = ChannelJanitor(
            store: store,
            lifecycle: channels,
            policy: configuration.channels,
            timeline: configuration.timeline,
            interval: configuration.janitorInterval,
            clock: clock,
            logger: logger,
            metricsFactory: configuration.metricsFactory
        )
        return (channels, reconciler, janitor)
    }

    /// Starts now, late joiners' starts, and everything scheduled for later.
    private static func makeStarts(
        store: any MarqueeStore,
        parts: (broadcasts: BroadcastService, events: EventService),
        wakeups: (jobs: JobWakeup, lateJoiners: JobWakeup),
        configuration: EngineConfiguration,
        clock: any WallClock,
        logger: Logger
    ) -> (StartService, LateJoinPump, ScheduleService) {
        let starts = StartService(
            store: store,
            wakeup: wakeups.jobs,
            partitions: configuration.jobs.partitions,
            pageSize: configuration.jobs.pageSize,
            confirmsStarts: configuration.jobs.uncertainStarts == .confirm,
            clock: clock,
            logger: logger
        )
        let lateJoiners = LateJoinPump(
            store: store,
            starts: starts,
            configuration: configuration.lateJoiners,
            wakeup: wakeups.lateJoiners,
            clock: clock,
            logger: logger
        )
        let schedules = ScheduleService(
            store: store,
            starts: starts,
            broadcasts: parts.broadcasts,
            events: parts.events,
            wakeup: wakeups.jobs,
            clock: clock,
            logger: logger
        )
        return (starts, lateJoiners, schedules)
    }
}
