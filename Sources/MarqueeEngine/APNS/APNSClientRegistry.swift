import CoreMetrics
import Logging
import MarqueeAPNS
import MarqueeCore
import NIOCore
import ServiceLifecycle

/// One APNs client per app signing key and environment, created when first needed and replaced when
/// the app's key is rotated. Clients hold long-lived HTTP/2 connections, so they are shared by every
/// request of the app and shut down with the service.
public actor APNSClientRegistry: Service {
    private struct Slot: Hashable {
        var appID: AppID
        var environment: APNSEnvironment
    }

    private struct Entry {
        var signingKeyID: SigningKeyID
        var client: APNSClient
    }

    private let store: any AppStore
    private let target: APNSTarget
    private let eventLoopGroup: any EventLoopGroup
    private let clock: any WallClock
    private let logger: Logger
    private let metricsFactory: any MetricsFactory
    private var entries: [Slot: Entry] = [:]
    private var isShutDown = false
    /// Runs (fan-outs) using clients now: shutdown waits for them to finish their in-flight sends.
    private var holds = 0
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
        self.store = store
        self.target = target
        self.eventLoopGroup = eventLoopGroup
        self.clock = clock
        self.logger = logger
        self.metricsFactory = metricsFactory
    }

    /// The client for the app's current signing key in `environment`.
    public func client(for app: App, environment: APNSEnvironment) async throws -> APNSClient {
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
        // Another caller may have installed a client for the same key while this one was made.
        if let entry = entries[slot], entry.signingKeyID == signingKeyID {
            await client.shutdown()
            return entry.client
        }
        let replaced = entries.updateValue(Entry(signingKeyID: signingKeyID, client: client), forKey: slot)
        if let replaced {
            logger.debug(
                "APNs client replaced after a key rotation",
                metadata: ["app.id": "\(app.id)", "apns.environment": "\(environment)"]
            )
            await replaced.client.shutdown()
        }
        return client
    }

    public func run() async throws {
        try? await gracefulShutdown()
        await shutdown()
    }

    /// Marks a run that uses clients; `false` once shutting down. Balance with `release()`.
    func hold() -> Bool {
        guard !isShutDown else { return false }
        holds += 1
        return true
    }

    func release() {
        holds = max(0, holds - 1)
        if holds == 0 { endWaitForHolds() }
    }

    /// Closes every client's connections, after the runs holding them finished (10 s at most).
    public func shutdown() async {
        isShutDown = true
        if holds > 0 {
            // Not a sleep of this task's: shutdown also runs when the service is cancelled, and a
            // cancelled sleep returns at once (it would spin here, holding the actor that
            // `release` needs).
            let deadline = Task {
                try? await Task.sleep(for: .seconds(10))
                await self.endWaitForHolds()
            }
            await withCheckedContinuation { holdWaiters.append($0) }
            deadline.cancel()
        }
        let clients = entries.values.map(\.client)
        entries.removeAll()
        for client in clients { await client.shutdown() }
    }

    private func endWaitForHolds() {
        let waiters = holdWaiters
        holdWaiters.removeAll()
        for waiter in waiters { waiter.resume() }
    }

    private func makeClient(app: App, signingKeyID: SigningKeyID, environment: APNSEnvironment) async throws -> APNSClient {
        guard let key = try await store.signingKeys(appID: app.id).first(where: { $0.id == signingKeyID }),
            let pem = try await store.signingKeyPEM(appID: app.id, id: signingKeyID)
        else {
            throw EngineError.appNotConfigured("the app's signing key is missing from the store: upload it again")
        }
        guard key.isUsable(in: environment) else {
            throw EngineError.appNotConfigured(
                "the app's signing key \(key.keyID) is restricted to \(key.environments.map(\.rawValue).sorted().joined(separator: ", ")) and cannot sign for \(environment)"
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
            return try APNSClient(
                configuration: configuration,
                eventLoopGroup: eventLoopGroup,
                clock: clock,
                logger: clientLogger
            )
        } catch {
            throw EngineError.apnsUnavailable("the APNs client cannot be configured: \(error)")
        }
    }
}
