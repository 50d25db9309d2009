import CoreMetrics
import Logging
import MarqueeAPNS
import MarqueeCore
import NIOCore
import ServiceLifecycle

/// One APNs client per app signing key and environment, created when first needed and replaced when
/// the app's key is rotated. Clients hold long-lived HTTP/2 connections, so they are shared by every
/// request of the app and shut down with the service.
///
/// A run (a fan-out) holds its client for as long as it sends (`holdClient`, `release`). When the
/// key is rotated meanwhile, new work gets a client for the new key and the old one is retired: it
/// keeps its connections and in-flight requests until its last holder releases it, and only then
/// shuts down, so a rotation neither fails nor duplicates what the run had in flight.
public actor APNSClientRegistry: Service {
    /// Makes the client for one app's key in one environment from its configuration (signing key,
    /// endpoints, metrics) and a logger carrying the app's ID.
    public typealias ClientFactory = @Sendable (APNSClientConfiguration, Logger) throws -> any APNSGateway

    private struct Slot: Hashable {
        var appID: AppID
        var environment: APNSEnvironment
    }

    private struct Entry {
        var signingKeyID: SigningKeyID
        var client: any APNSGateway
    }

    private let store: any AppStore
    private let target: APNSTarget
    private let makeGateway: ClientFactory
    private let logger: Logger
    /// Tells the time and sleeps for the shutdown's wait.
    private let clock: any WallClock
    private let metricsFactory: any MetricsFactory
    private var entries: [Slot: Entry] = [:]
    private var isShutDown = false
    /// Runs (fan-outs) using clients now: shutdown waits for them to finish their in-flight sends.
    private var holds = 0
    /// Holds per client, so that a replaced client closes when its last run is done with it.
    private var holdsByClient: [ObjectIdentifier: Int] = [:]
    /// Clients a key rotation replaced while runs still held them.
    private var retired: [ObjectIdentifier: any APNSGateway] = [:]
    /// Shutdowns of replaced clients under way (awaited by `shutdown()`).
    private var closing: [ObjectIdentifier: Task<Void, Never>] = [:]
    /// Shutdowns waiting for `holds` to reach zero.
    private var holdWaiters: [CheckedContinuation<Void, Never>] = []

    public init(
        store: any AppStore,
        target: APNSTarget,
        eventLoopGroup: any EventLoopGroup,
        clock: any WallClock,
        logger: Logger,
        metricsFactory: any MetricsFactory = MetricsSystem.factory
    ) {
        self.init(store: store, target: target, clock: clock, logger: logger, metricsFactory: metricsFactory) {
            configuration,
            log in
            try APNSClient(configuration: configuration, eventLoopGroup: eventLoopGroup, clock: clock, logger: log)
        }
    }

    /// A registry whose clients `makeClient` makes: an engine test's fake APNs instead of
    /// `APNSClient`s. The store's signing keys are read and checked as for real clients.
    public init(
        store: any AppStore,
        target: APNSTarget,
        clock: any WallClock = SystemWallClock(),
        logger: Logger,
        metricsFactory: any MetricsFactory = MetricsSystem.factory,
        makeClient: @escaping ClientFactory
    ) {
        self.store = store
        self.target = target
        self.clock = clock
        self.logger = logger
        self.metricsFactory = metricsFactory
        self.makeGateway = makeClient
    }

    /// The client for the app's current signing key in `environment`.
    public func client(for app: App, environment: APNSEnvironment) async throws -> any APNSGateway {
        guard !isShutDown else { throw EngineError.apnsUnavailable("the service is shutting down") }
        guard app.environments.contains(environment) else { throw EngineError.environmentNotEnabled(environment) }
        let slot = Slot(appID: app.id, environment: environment)
        if let entry = entries[slot], entry.signingKeyID == app.signingKeyID { return entry.client }
        // The caller's app may be a few seconds old (`CredentialCache`): which key is current is the
        // store's to say, so that a stale copy never brings back a rotated key's client.
        let current = try await store.app(app.id) ?? app
        guard let signingKeyID = current.signingKeyID else {
            throw EngineError.appNotConfigured(
                "the app has no APNs signing key: upload its .p8 with PUT /v1/apps/{appID}/signing-key"
            )
        }
        if let entry = entries[slot], entry.signingKeyID == signingKeyID { return entry.client }

        let client = try await makeClient(app: current, signingKeyID: signingKeyID, environment: environment)
        // No suspension from here to the return: a caller that holds the client it gets holds it
        // before anything else can retire it.
        guard !isShutDown else {
            retire(client)
            throw EngineError.apnsUnavailable("the service is shutting down")
        }
        // Another caller may have installed a client for the same key while this one was made.
        if let entry = entries[slot], entry.signingKeyID == signingKeyID {
            retire(client)
            return entry.client
        }
        let replaced = entries.updateValue(Entry(signingKeyID: signingKeyID, client: client), forKey: slot)
        if let replaced {
            logger.debug(
                "APNs client replaced after a key rotation; the old one closes when its runs are done",
                metadata: [
                    "app.id": "\(app.id)", "apns.environment": "\(environment)",
                    "apns.holds": "\(holdsByClient[ObjectIdentifier(replaced.client)] ?? 0)",
                ]
            )
            retire(replaced.client)
        }
        return client
    }

    /// The client for the app's current signing key, held by the caller until `release(_:)`:
    /// a key rotation meanwhile does not close it.
    func holdClient(for app: App, environment: APNSEnvironment) async throws -> any APNSGateway {
        let client = try await client(for: app, environment: environment)
        guard !isShutDown else { throw EngineError.apnsUnavailable("the service is shutting down") }
        holdsByClient[ObjectIdentifier(client), default: 0] += 1
        holds += 1
        return client
    }

    /// Ends a hold from `holdClient`; a retired client's last release shuts it down.
    func release(_ client: any APNSGateway) {
        let id = ObjectIdentifier(client)
        let remaining = (holdsByClient[id] ?? 1) - 1
        if remaining > 0 {
            holdsByClient[id] = remaining
        } else {
            holdsByClient[id] = nil
            if let retiredClient = retired.removeValue(forKey: id) { shutDownInBackground(retiredClient) }
        }
        holds = max(0, holds - 1)
        if holds == 0 { endWaitForHolds() }
    }

    /// A client no new work gets: closed now if nobody holds it, else by its last `release`.
    private func retire(_ client: any APNSGateway) {
        let id = ObjectIdentifier(client)
        if holdsByClient[id, default: 0] > 0 {
            retired[id] = client
        } else {
            shutDownInBackground(client)
        }
    }

    /// Closes `client` without making the caller wait (callers may be mid-way through handing out
    /// a client); `shutdown()` waits for it.
    private func shutDownInBackground(_ client: any APNSGateway) {
        let id = ObjectIdentifier(client)
        closing[id] = Task {
            await client.shutdown()
            self.closed(id)
        }
    }

    private func closed(_ id: ObjectIdentifier) {
        closing[id] = nil
    }

    public func run() async throws {
        try? await gracefulShutdown()
        await shutdown()
    }

    /// Closes every client's connections, after the runs holding them finished (10 s at most).
    public func shutdown() async {
        isShutDown = true
        if holds > 0 {
            // Not a sleep of this task's: shutdown also runs when the service is cancelled, and a
            // cancelled sleep returns at once (it would spin here, holding the actor that
            // `release` needs).
            let deadline = Task {
                try? await self.clock.sleep(for: .seconds(10))
                self.endWaitForHolds()
            }
            await withCheckedContinuation { holdWaiters.append($0) }
            deadline.cancel()
        }
        let clients = entries.values.map(\.client) + retired.values
        entries.removeAll()
        retired.removeAll()
        for client in clients { await client.shutdown() }
        for task in closing.values { await task.value }
    }

    private func endWaitForHolds() {
        let waiters = holdWaiters
        holdWaiters.removeAll()
        for waiter in waiters { waiter.resume() }
    }

    private func makeClient(
        app: App,
        signingKeyID: SigningKeyID,
        environment: APNSEnvironment
    ) async throws -> any APNSGateway {
        guard let key = try await store.signingKeys(appID: app.id).first(where: { $0.id == signingKeyID }),
            let pem = try await store.signingKeyPEM(appID: app.id, id: signingKeyID)
        else {
            throw EngineError.appNotConfigured("the app's signing key is missing from the store: upload it again")
        }
        guard key.isUsable(in: environment) else {
            throw EngineError.appNotConfigured(
                """
                the app's signing key \(key.keyID) is restricted to \
                \(key.environments.map(\.rawValue).sorted().joined(separator: ", ")) and cannot sign for \
                \(environment)
                """
            )
        }
        let signingKey: APNSSigningKey
        do {
            signingKey = try APNSSigningKey(pemRepresentation: pem, keyID: key.keyID, teamID: key.teamID)
        } catch {
            throw EngineError.appNotConfigured("the app's signing key cannot be read: \(error)")
        }
        var clientLogger = logger
        clientLogger[metadataKey: "app.id"] = "\(app.id)"
        var configuration = target.configuration(environment: environment, signingKey: signingKey)
        configuration.metricsFactory = metricsFactory
        do {
            return try makeGateway(configuration, clientLogger)
        } catch {
            throw EngineError.apnsUnavailable("the APNs client cannot be configured: \(error)")
        }
    }
}
