import Logging
import MarqueeCore
import NIOCore

/// Marquee's use cases over one store and APNs, assembled once: the server calls them, knowing no
/// SQL; they know no HTTP. Its long-lived parts (`clients`, `janitor`) are services to run.
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
        channels = ChannelLifecycle(
            store: store,
            clients: clients,
            policy: configuration.channels,
            clock: clock,
            logger: logger,
            metricsFactory: configuration.metricsFactory
        )
        reconciler = ChannelReconciler(
            store: store,
            clients: clients,
            lifecycle: channels,
            policy: configuration.channels,
            clock: clock,
            logger: logger
        )
        let wakeup = JobWakeup(clock: clock)
        self.wakeup = wakeup
        let timeline = TimelinePlanner(store: store, policy: configuration.timeline, wakeup: wakeup, clock: clock, logger: logger)
        let channelAnswers = ChannelAnswerCache(capacity: configuration.channelAnswerCacheSize)
        store.channelAnswerChanges.observe { [weak channelAnswers] eventID in channelAnswers?.forget(eventID: eventID) }
        events = EventService(
            store: store,
            clients: clients,
            channels: channels,
            timeline: timeline,
            channelAnswers: channelAnswers,
            clock: clock,
            logger: logger
        )
        broadcasts = BroadcastService(
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
        let lateJoinWakeup = JobWakeup(clock: clock)
        self.lateJoinWakeup = lateJoinWakeup
        tokens = TokenRegistry(
            store: store,
            maximumBatchSize: configuration.maximumTokenBatch,
            lateJoinWakeup: lateJoinWakeup,
            clock: clock,
            logger: logger
        )
        presence = PresenceService(store: store, bound: configuration.presenceReports, clock: clock, logger: logger)
        idempotency = IdempotencyKeys(store: store, clock: clock)
        janitor = ChannelJanitor(
            store: store,
            lifecycle: channels,
            policy: configuration.channels,
            timeline: configuration.timeline,
            interval: configuration.janitorInterval,
            clock: clock,
            logger: logger,
            metricsFactory: configuration.metricsFactory
        )
        starts = StartService(
            store: store,
            wakeup: wakeup,
            partitions: configuration.jobs.partitions,
            pageSize: configuration.jobs.pageSize,
            confirmsStarts: configuration.jobs.uncertainStarts == .confirm,
            clock: clock,
            logger: logger
        )
        lateJoiners = LateJoinPump(
            store: store,
            starts: starts,
            configuration: configuration.lateJoiners,
            wakeup: lateJoinWakeup,
            clock: clock,
            logger: logger
        )
        schedules = ScheduleService(
            store: store,
            starts: starts,
            broadcasts: broadcasts,
            events: events,
            wakeup: wakeup,
            clock: clock,
            logger: logger
        )
        let runner = FanOutRunner(
            store: store,
            configuration: configuration.jobs,
            clock: clock,
            logger: logger,
            metrics: JobMetrics(factory: configuration.metricsFactory)
        )
        worker = JobWorker(
            store: store,
            handlers: [
                StartFanOutHandler(store: store, clients: clients, runner: runner),
                StartConfirmationHandler(
                    store: store,
                    clients: clients,
                    rules: configuration.jobs.confirmation,
                    configuration: configuration.jobs,
                    pendingStartWakeup: lateJoinWakeup,
                    clock: clock,
                    logger: logger,
                    metrics: ConfirmationMetrics(factory: configuration.metricsFactory)
                ),
                ActivityUpdateHandler(store: store, clients: clients, runner: runner, budget: configuration.broadcasts.activityBudget),
                ScheduleRunner(
                    store: store,
                    starts: starts,
                    broadcasts: broadcasts,
                    events: events,
                    channels: channels,
                    timeline: timeline,
                    configuration: configuration.jobs,
                    clock: clock,
                    logger: logger
                ),
            ],
            configuration: configuration.jobs,
            wakeup: wakeup,
            clock: clock,
            logger: logger
        )
    }
}
