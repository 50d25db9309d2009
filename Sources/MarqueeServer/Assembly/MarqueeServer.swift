import Foundation
import Hummingbird
import Logging
import MarqueeCore
import MarqueeEmulator
import MarqueeEngine
import MarqueeStorage
import NIOCore
import NIOPosix
import PostgresNIO
import Prometheus
import ServiceLifecycle
import UnixSignals

/// `marquee serve`: opens the store (migrating it), starts APNs' side (Apple, a configured
/// emulator, or one in this process), assembles the engine and the HTTP API, and runs them as one
/// ServiceGroup until SIGTERM or SIGINT, shutting down gracefully in reverse order.
public enum MarqueeServer {
    /// What a running server tells whoever started it.
    public struct Started: Sendable {
        /// The address the API listens on, with the port actually bound.
        public var baseURL: String
        /// The first deployment key, on the first start of an empty store only.
        public var firstDeploymentKey: String?
        public var store: any MarqueeStore
        public var engine: MarqueeEngine
        /// The in-process emulator, when APNs is one.
        public var emulator: APNSEmulator?
        public var storeDescription: String
    }

    /// Runs until a signal (or cancellation of the calling task). `onStarted` is called once the
    /// API accepts connections.
    ///
    /// - Parameter metrics: where the server's metrics go and what `/metrics` shows; a registry of
    ///   its own by default, so that servers in one process (tests) never mix their numbers and
    ///   nothing needs swift-metrics' process-wide bootstrap.
    public static func run(
        configuration: ServerConfiguration,
        logger: Logger,
        metrics: PrometheusCollectorRegistry = PrometheusCollectorRegistry(),
        clock: any WallClock = SystemWallClock(),
        signals: [UnixSignal] = [.sigterm, .sigint],
        onStarted: @escaping @Sendable (Started) async -> Void = { _ in }
    ) async throws {
        let run = RunSettings(
            configuration: configuration,
            logger: logger,
            metrics: metrics,
            clock: clock,
            onStarted: onStarted
        )
        let storeLogger = logger.withLevel(atMost: .info)
        let sealer = try OpenedStore.sealer(configuration: configuration, logger: logger)
        let migrations =
            configuration.sqlDirectory.map { MigrationDirectory(root: URL(fileURLWithPath: $0, isDirectory: true)) }
            ?? .resolved()
        let storeConfiguration = StoreConfiguration(
            sealer: sealer,
            migrations: migrations,
            clock: clock,
            logger: storeLogger
        )
        if let url = configuration.databaseURL {
            try await runOnPostgres(url, storeConfiguration: storeConfiguration, run, signals: signals)
        } else {
            let opened = try await OpenedStore.sqlite(
                configuration: configuration,
                storeConfiguration: storeConfiguration
            )
            do {
                try await serve(opened, run, signals: signals)
            } catch {
                await opened.close()
                throw error
            }
            await opened.close()
        }
    }

    /// What `run` was given, for the steps that open the store and start the services.
    private struct RunSettings: Sendable {
        let configuration: ServerConfiguration
        let logger: Logger
        let metrics: PrometheusCollectorRegistry
        let clock: any WallClock
        let onStarted: @Sendable (Started) async -> Void
    }

    /// The PostgreSQL client and Marquee's services in one group that takes the signals: a graceful
    /// shutdown stops Marquee's services (in their own order, the job worker committing what it had
    /// in flight) before the client they commit through.
    private static func runOnPostgres(
        _ url: String,
        storeConfiguration: StoreConfiguration,
        _ run: RunSettings,
        signals: [UnixSignal]
    ) async throws {
        let configuration = run.configuration
        let storeLogger = storeConfiguration.logger
        let target: PostgresConnectionURL
        do {
            target = try PostgresConnectionURL(url)
        } catch {
            throw ConfigurationError(key: "database.url", "\(error)")
        }
        let client = PostgresClient(
            configuration: configuration.postgresClientConfiguration(for: target),
            backgroundLogger: storeLogger
        )
        let marquee = StoreBoundService {
            let opened = try await OpenedStore.postgres(
                client: client,
                target: target,
                callTimeout: .seconds(configuration.databaseCallTimeoutSeconds),
                startupWait: .seconds(configuration.databaseStartupWaitSeconds),
                storeConfiguration: storeConfiguration
            )
            let notifications = PostgresNotifications(
                client: client,
                subscriptions: [.jobs, .credentials, .channelAnswers],
                // Marquee's own, not the client's chatter: its debug lines say what each replica heard.
                logger: run.logger
            )
            try await serve(opened, run, signals: [], extraServices: [notifications])
        }
        let group = ServiceGroup(
            configuration: .init(
                services: [
                    .init(service: client),
                    .init(service: marquee, successTerminationBehavior: .gracefullyShutdownGroup),
                ],
                gracefulShutdownSignals: signals,
                cancellationSignals: [],
                logger: run.logger.withLevel(atMost: .notice)
            )
        )
        try await group.run()
    }

    private static func serve(
        _ opened: OpenedStore,
        _ run: RunSettings,
        signals: [UnixSignal],
        extraServices: [any EngineService] = []
    ) async throws {
        let (configuration, logger) = (run.configuration, run.logger)
        // Before anything unseals a signing key (the in-process emulator's provisioning does).
        try await resealSigningKeys(in: opened.store, logger: logger)
        var services: [any Service] = []
        let apns = try await resolveAPNS(
            configuration.apns,
            store: opened.store,
            configuration: configuration,
            clock: run.clock,
            logger: logger
        )
        if let emulator = apns.emulator { services.append(emulator.emulator) }
        var target = apns.target
        target.transport = configuration.apnsTransport

        var engineConfiguration = configuration.engine
        engineConfiguration.metricsFactory = PrometheusMetricsFactory.marquee(registry: run.metrics)
        let engine = MarqueeEngine(
            store: opened.store,
            target: target,
            provisioner: apns.provisioner,
            configuration: engineConfiguration,
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
            clock: run.clock,
            logger: logger
        )
        let api = try await apiService(engine: engine, opened: opened, emulator: apns.emulator?.emulator, run)
        // Listed in start order; a graceful shutdown stops them in reverse: the API first, then the
        // worker (which finishes its in-flight sends), then the APNs clients.
        services +=
            [engine.clients, engine.janitor, engine.funnelReporter, engine.worker, engine.lateJoiners] as [any Service]
        services += extraServices.map { $0.service(for: engine) }
        services.append(api)
        let group = ServiceGroup(
            configuration: .init(
                services: services.map { .init(service: $0) },
                gracefulShutdownSignals: signals,
                cancellationSignals: [],
                logger: logger.withLevel(atMost: .notice)
            )
        )
        try await group.run()
    }

    /// The HTTP API over the engine, which tells `onStarted` once it accepts connections (with the
    /// first deployment key, made here on the first start of an empty store).
    private static func apiService(
        engine: MarqueeEngine,
        opened: OpenedStore,
        emulator: APNSEmulator?,
        _ run: RunSettings
    ) async throws -> any Service {
        let (configuration, logger) = (run.configuration, run.logger)
        let firstKey = try await engine.apps.bootstrapDeploymentKey()
        let inspection: (any EmulatorInspection)? =
            emulator ?? configuration.emulatorInspectionURL.map { RemoteEmulatorInspection(baseURL: $0) }
        let shared = try MarqueeApplication.SharedParts(configuration: configuration, metrics: run.metrics)
        let router = try MarqueeApplication.router(
            engine: engine,
            configuration: configuration,
            metrics: run.metrics,
            shared: shared,
            emulator: inspection,
            logger: logger
        )
        let eventLoopAnswers = try MarqueeApplication.eventLoopAnswers(
            engine: engine,
            configuration: configuration,
            shared: shared,
            logger: logger
        )
        let storeDescription = opened.description
        return Application(
            router: router,
            server: .guardedHTTP1(
                limits: configuration.connectionLimits,
                eventLoopAnswers: configuration.eventLoopAnswers ? eventLoopAnswers : nil,
                logger: logger.withLevel(atMost: .info)
            ),
            configuration: .init(
                address: .hostname(configuration.host, port: configuration.port),
                serverName: MarqueeApplication.serverName
            ),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? configuration.port
                await run.onStarted(
                    Started(
                        baseURL: "http://\(configuration.host):\(port)",
                        firstDeploymentKey: firstKey,
                        store: opened.store,
                        engine: engine,
                        emulator: emulator,
                        storeDescription: storeDescription
                    )
                )
            },
            logger: logger.withLevel(atMost: .info)
        )
    }

    /// Where APNs is for this process: Apple, given endpoints, or an emulator started in-process
    /// (whose accounts are provisioned for every app in the store).
    private struct ResolvedAPNS {
        var target: APNSTarget
        var provisioner: any APNSAccountProvisioner
        var emulator: InProcessEmulator?
    }

    private static func resolveAPNS(
        _ choice: ServerConfiguration.APNSTargetChoice,
        store: any MarqueeStore,
        configuration: ServerConfiguration,
        clock: any WallClock,
        logger: Logger
    ) async throws -> ResolvedAPNS {
        switch choice {
        case .apple:
            return ResolvedAPNS(target: .apple, provisioner: AppleAPNSAccount())
        case .custom(let endpoints, let caFile):
            return ResolvedAPNS(
                target: try APNSTargetParsing.custom(endpoints: endpoints, caFile: caFile),
                provisioner: AppleAPNSAccount()
            )
        case .emulator:
            let started = try await InProcessEmulator.start(
                stateDirectory: (configuration.dataDirectory as NSString).appendingPathComponent("emulator"),
                clock: clock,
                logger: logger.withLevel(atMost: .info)
            )
            let provisioner = EmulatorAccountProvisioner(emulator: started.emulator)
            try await provisioner.provisionEverything(in: store)
            return ResolvedAPNS(target: try started.target(), provisioner: provisioner, emulator: started)
        }
    }
}

extension MarqueeServer {
    /// After a master-key rotation (a new key first in `secrets.masterKeys`, the old one after it),
    /// the signing keys the old key sealed are sealed again under the new one, so that the old key
    /// can leave the keyring once every replica has started with the new one. A signing key sealed
    /// by a key the keyring no longer holds stops the start: that app could not sign a push.
    /// Idempotent; replicas starting together wait on each other's rows.
    static func resealSigningKeys(in store: any MarqueeStore, logger: Logger) async throws {
        let resealed: Int
        do {
            resealed = try await store.resealSigningKeys()
        } catch SecretError.unknownMasterKey(let id) {
            throw ConfigurationError(
                key: "secrets.masterKeys",
                """
                a stored signing key is sealed by master key \"\(id)\", which the keyring no longer holds: put it \
                back after the current key, start once so that it is re-sealed, then remove it
                """
            )
        }
        if resealed > 0 {
            logger.notice(
                "signing keys re-sealed under the current master key",
                metadata: ["signing_keys.resealed": "\(resealed)"]
            )
        }
    }
}

extension Logger {
    /// A copy that logs at most as verbosely as `level` (libraries' debug chatter stays out of a
    /// service's info log).
    func withLevel(atMost level: Logger.Level) -> Logger {
        var copy = self
        if copy.logLevel < level { copy.logLevel = level }
        return copy
    }
}
