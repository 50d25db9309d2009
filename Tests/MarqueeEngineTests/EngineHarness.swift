import Foundation
import Logging
import MarqueeAPNS
import MarqueeCore
import MarqueeStorage
import MarqueeTesting

@testable import MarqueeEngine

/// The engine's use cases over a real SQLite store in a temporary folder and a fake APNs per
/// environment, on a manual clock: what the use-case suites drive, with no server and no socket.
/// The one place the services are assembled for them (as `MarqueeEngine.init` does for a server).
final class EngineHarness: Sendable {
    let clock: ManualWallClock
    let store: SQLiteStore
    let fakes: [APNSEnvironment: FakeAPNS]
    let app: App
    let configuration: EngineConfiguration
    let clients: APNSClientRegistry
    let wakeup: JobWakeup
    /// What a registration that queued late joiners signals: the late-join pump's wakeup.
    let lateJoinWakeup: JobWakeup
    let channels: ChannelLifecycle
    let reconciler: ChannelReconciler
    let timeline: TimelinePlanner
    let events: EventService
    let broadcasts: BroadcastService
    let tokens: TokenRegistry
    let starts: StartService
    let runner: FanOutRunner
    private let folder: URL

    /// The start's attributes type every test event uses.
    static let attributesType = "MatchAttributes"

    /// - Parameter jobs: the fan-out's settings (retries without waiting by default).
    init(
        environments: Set<APNSEnvironment> = [.sandbox, .production],
        jobs: JobWorkerConfiguration = EngineHarness.jobs(),
        broadcasts: BroadcastPolicy = BroadcastPolicy()
    ) async throws {
        let clock = ManualWallClock()
        let wakeup = JobWakeup(clock: clock)
        self.clock = clock
        self.wakeup = wakeup
        lateJoinWakeup = JobWakeup(clock: clock)
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("marquee-engine-\(UUID().uuidString.prefix(8))")
        self.folder = folder
        let sealer = SecretSealer(current: try MasterKey(id: "engine-tests", base64: MasterKey.generateBase64()))
        let store = try await SQLiteStore.open(
            path: folder.appendingPathComponent("marquee.sqlite").path,
            configuration: StoreConfiguration(sealer: sealer, migrations: .sources)
        )
        try await store.migrate()
        self.store = store
        let logger = Logger(label: "engine-harness")
        var configuration = EngineConfiguration()
        configuration.jobs = jobs
        configuration.broadcasts = broadcasts
        self.configuration = configuration

        let fakes = Dictionary(uniqueKeysWithValues: APNSEnvironment.allCases.map { ($0, FakeAPNS(environment: $0)) })
        self.fakes = fakes
        let clients = APNSClientRegistry(store: store, target: .apple, logger: logger) { configuration, _ in
            guard let fake = fakes[configuration.environment] else {
                throw EngineError.environmentNotEnabled(configuration.environment)
            }
            return fake
        }
        self.clients = clients
        app = try await Self.makeApp(store: store, environments: environments, at: clock.now)

        let channels = ChannelLifecycle(
            store: store,
            clients: clients,
            policy: configuration.channels,
            clock: clock,
            logger: logger
        )
        self.channels = channels
        reconciler = ChannelReconciler(
            store: store,
            clients: clients,
            lifecycle: channels,
            policy: configuration.channels,
            clock: clock,
            logger: logger
        )
        let timeline = TimelinePlanner(
            store: store,
            policy: configuration.timeline,
            wakeup: wakeup,
            clock: clock,
            logger: logger
        )
        self.timeline = timeline
        let events = EventService(
            store: store,
            clients: clients,
            channels: channels,
            timeline: timeline,
            channelAnswers: ChannelAnswerCache(capacity: 16),
            clock: clock,
            logger: logger
        )
        self.events = events
        self.broadcasts = BroadcastService(
            store: store,
            clients: clients,
            events: events,
            policy: broadcasts,
            activityUpdates: ActivityUpdateService(store: store, wakeup: wakeup, clock: clock, logger: logger),
            timeline: timeline,
            clock: clock,
            logger: logger
        )
        tokens = TokenRegistry(
            store: store,
            maximumBatchSize: configuration.maximumTokenBatch,
            lateJoinWakeup: lateJoinWakeup,
            clock: clock,
            logger: logger
        )
        starts = StartService(
            store: store,
            wakeup: wakeup,
            partitions: jobs.partitions,
            pageSize: jobs.pageSize,
            confirmsStarts: false,
            clock: clock,
            logger: logger
        )
        runner = FanOutRunner(
            store: store,
            configuration: jobs,
            clock: clock,
            logger: logger,
            metrics: JobMetrics(factory: configuration.metricsFactory)
        )
    }

    /// A fan-out in one part, whose uncertain starts are left unsent (`skip`), committing every
    /// `batchSize` outcomes, with `window` pushes outstanding at most.
    static func jobs(window: Int? = nil, batchSize: Int = 500) -> JobWorkerConfiguration {
        JobWorkerConfiguration(
            pageSize: 50,
            partitions: 1,
            window: window,
            batchSize: batchSize,
            retryBaseDelay: .milliseconds(1),
            retryMaximumDelay: .milliseconds(5),
            uncertainStarts: .skip
        )
    }

    /// Closes the store and removes its folder.
    func close() async {
        await clients.shutdown()
        try? await store.close()
        try? FileManager.default.removeItem(at: folder)
    }

    /// The fake APNs of `environment`.
    func apns(_ environment: APNSEnvironment) -> FakeAPNS {
        fakes[environment]!
    }

    /// A registry of APNs clients over the harness's store whose clients `makeClient` makes (for
    /// the registry's own suite: the harness's registry hands out one fake per environment).
    func registry(makeClient: @escaping APNSClientRegistry.ClientFactory) -> APNSClientRegistry {
        let logger = Logger(label: "engine-harness")
        return APNSClientRegistry(store: store, target: .apple, logger: logger, makeClient: makeClient)
    }

    /// Scheduling over the harness's services, as the engine assembles it.
    var schedules: ScheduleService {
        ScheduleService(
            store: store,
            starts: starts,
            broadcasts: broadcasts,
            events: events,
            wakeup: wakeup,
            clock: clock,
            logger: Logger(label: "engine-harness")
        )
    }

    /// The job worker's handler of due schedules, over the harness's services.
    var scheduleRunner: ScheduleRunner {
        ScheduleRunner(
            store: store,
            starts: starts,
            broadcasts: broadcasts,
            events: events,
            channels: channels,
            timeline: timeline,
            configuration: runner.configuration,
            clock: clock,
            logger: Logger(label: "engine-harness")
        )
    }

    /// A replica's late-join pump over the harness's store and starts, woken by registrations.
    func lateJoinPump(_ configuration: LateJoinConfiguration = LateJoinConfiguration()) -> LateJoinPump {
        LateJoinPump(
            store: store,
            starts: starts,
            configuration: configuration,
            wakeup: lateJoinWakeup,
            clock: clock,
            logger: Logger(label: "engine-harness")
        )
    }

    /// The start fan-out's handler, over `store` (the harness's own, or a decorator of it).
    func startHandler(store: (any AppStore & DeliveryStore & TokenStore & JobStore)? = nil) -> StartFanOutHandler {
        let store = store ?? self.store
        let runner = FanOutRunner(
            store: store,
            configuration: runner.configuration,
            clock: clock,
            logger: runner.logger,
            metrics: runner.metrics
        )
        return StartFanOutHandler(store: store, clients: clients, runner: runner)
    }

    /// Another app on the same server and APNs (its own bundle ID and signing key): what one app
    /// must not see of another's.
    func otherApp() async throws -> App {
        try await Self.makeApp(
            store: store,
            name: "Racing",
            bundleID: "com.example.racing",
            environments: app.environments,
            at: clock.now
        )
    }

    private static func makeApp(
        store: SQLiteStore,
        name: String = "Scores",
        bundleID: String = "com.example.scores",
        environments: Set<APNSEnvironment>,
        at now: Date
    ) async throws
        -> App
    {
        let app = App(
            name: name,
            bundleID: bundleID,
            teamID: "TEAM123456",
            environments: environments,
            createdAt: now
        )
        try await store.createApp(app)
        let key = SigningKey(appID: app.id, keyID: "KEY1234567", teamID: "TEAM123456", createdAt: now)
        try await store.storeSigningKey(key, privateKeyPEM: FakeAPNS.signingKeyPEM())
        return try await store.app(app.id) ?? app
    }
}
