import CoreMetrics
import Foundation
import Logging
import MarqueeAPNS
import MarqueeCore

/// Creates and deletes an event's broadcast channels at APNs with the store as the record, so that
/// there is exactly one live channel per event and environment whatever retries and replicas do,
/// and no channel at APNs that Marquee does not know (or knows and cleans up).
///
/// Creation reserves the row first (`creating`, unique per event and environment), then asks APNs,
/// then records APNs' ID. A failure at APNs abandons the row; a crash after APNs' answer leaves a
/// `creating` row that `ChannelPolicy.isAbandoned` recognises, and the channel APNs made is found
/// by `ChannelReconciler` as an orphan and deleted.
public struct ChannelLifecycle: Sendable {
    let store: any ChannelStore
    let clients: APNSClientRegistry
    let policy: ChannelPolicy
    let clock: any WallClock
    let logger: Logger
    let metrics: ChannelMetrics

    public init(
        store: any ChannelStore,
        clients: APNSClientRegistry,
        policy: ChannelPolicy,
        clock: any WallClock,
        logger: Logger,
        metricsFactory: any MetricsFactory = MetricsSystem.factory
    ) {
        self.store = store
        self.clients = clients
        self.policy = policy
        self.clock = clock
        self.logger = logger
        self.metrics = ChannelMetrics(factory: metricsFactory)
    }

    /// The event's active channel in `environment`, created at APNs if it has none. Waits (up to
    /// `ChannelPolicy.creationWait`) for a creation another caller has under way, and returns the
    /// `creating` row if it has not finished by then.
    public func ensureChannel(app: App, event: Event, environment: APNSEnvironment) async throws -> BroadcastChannel {
        let deadline = clock.now.addingTimeInterval(policy.creationWait)
        var pause = Duration.milliseconds(10)
        while true {
            if let live = try await store.liveChannel(appID: app.id, eventID: event.id, environment: environment) {
                switch live.state {
                case .active:
                    return live
                case .deleting:
                    throw EngineError.conflict(
                        """
                        the event's \(environment) channel is being deleted (the event is closing); it cannot be \
                        used or created again: create a new event with another key
                        """
                    )
                default:
                    if policy.isAbandoned(live, now: clock.now) {
                        logger.debug("abandoning a stale channel reservation", metadata: ["channel.id": "\(live.id)"])
                        _ = try? await store.transitionChannel(appID: app.id, id: live.id, to: .deleted, at: clock.now)
                        continue
                    }
                    if clock.now >= deadline { return live }
                    // Not on the injected clock: this pause paces reads of another caller's work,
                    // which a clock a test holds still must not stop (only the deadline is time's).
                    try await Task.sleep(for: pause)
                    pause = min(pause * 2, .milliseconds(250))
                    continue
                }
            }
            try await checkQuota(app: app, environment: environment)
            let reservation = try await store.reserveChannel(
                appID: app.id,
                eventID: event.id,
                environment: environment,
                storagePolicy: event.storagePolicy,
                requestID: UUID.random(),
                at: clock.now
            )
            guard case .reserved(let row) = reservation else { continue }
            return try await create(row, app: app)
        }
    }

    /// Deletes the channel at APNs and records it `deleted`. Returns false when APNs could not be
    /// reached: the row stays `deleting` and `ChannelJanitor` tries again.
    @discardableResult
    public func deleteChannel(app: App, channel: BroadcastChannel) async throws -> Bool {
        var channel = channel
        switch channel.state {
        case .deleted:
            return true
        case .creating:
            // No APNs ID yet: abandoning the row makes its creator delete what APNs made.
            try await markDeleted(channel)
            return true
        case .active, .orphaned:
            do {
                channel = try await transition(channel, to: .deleting)
            } catch let error as StoreError where error.refusedBecauseDeleted {
                return true
            }
        case .deleting:
            break
        }
        guard let apnsChannelID = channel.apnsChannelID else {
            try await markDeleted(channel)
            return true
        }
        do {
            let client = try await clients.client(for: app, environment: channel.environment)
            try await client.deleteChannel(bundleID: app.bundleID, channelID: apnsChannelID)
        } catch let error as APNSError {
            switch error.failureClass {
            case .channelGone:
                break  // already gone at APNs: what deletion wanted
            case .retryLater, .renewTokenAndRetry, .uncertain:
                logger.debug(
                    "channel deletion deferred",
                    metadata: ["channel.id": "\(channel.id)", "error": "\(error)"]
                )
                return false
            default:
                throw EngineError(apns: error, bundleID: app.bundleID)
            }
        }
        try await markDeleted(channel)
        await reportQuota(app: app, environment: channel.environment)
        return true
    }

    /// The end of a deletion. A broadcast that met the channel already gone at APNs (this very
    /// deletion, racing it) may have marked it deleted first: that is the state wanted, not a
    /// conflict (nor is it when the channel was deleted before this deletion began).
    private func markDeleted(_ channel: BroadcastChannel) async throws {
        do {
            _ = try await transition(channel, to: .deleted)
        } catch let error as StoreError where error.refusedBecauseDeleted {
            return
        }
    }

    /// The app's channel with this ID, `nil` if it has none.
    public func channel(app: App, id: ChannelID) async throws -> BroadcastChannel? {
        try await store.channel(appID: app.id, id: id)
    }

    /// A page of the app's channels in `environments` and `states`, oldest first, after `after`,
    /// each with its event's key.
    public func channelPage(
        app: App,
        environments: Set<APNSEnvironment>,
        states: Set<ChannelState>,
        after: ChannelListPosition?,
        limit: Int
    ) async throws -> [ListedChannel] {
        try await store.channelPage(
            appID: app.id,
            environments: environments,
            states: states,
            after: after,
            limit: limit
        )
    }

    /// The channels counted against Apple's cap in `environment` (and the gauges of it).
    public func quota(app: App, environment: APNSEnvironment) async throws -> ChannelQuota {
        let used = try await store.channelCount(
            appID: app.id,
            environment: environment,
            states: ChannelPolicy.countedStates
        )
        let quota = policy.quota(environment: environment, used: used)
        metrics.report(app: app, quota: quota)
        return quota
    }

    /// Counts again for the gauges after a channel came or went; a failed count leaves them to
    /// the next one (the janitor's sweep at the latest).
    func reportQuota(app: App, environment: APNSEnvironment) async {
        _ = try? await quota(app: app, environment: environment)
    }

    // MARK: Steps

    private func checkQuota(app: App, environment: APNSEnvironment) async throws {
        let quota = try await quota(app: app, environment: environment)
        if quota.isExhausted {
            throw EngineError.channelQuotaExceeded(environment: environment, used: quota.used, limit: quota.limit)
        }
        if quota.used + 1 >= quota.warningAt {
            logger.warning(
                "channel quota nearly used",
                metadata: [
                    "app.id": "\(app.id)", "apns.environment": "\(environment)",
                    "channels.used": "\(quota.used + 1)", "channels.limit": "\(quota.limit)",
                ]
            )
        }
    }

    private func create(_ row: BroadcastChannel, app: App) async throws -> BroadcastChannel {
        let created: APNSChannelCreated
        let client: any APNSChannelManaging
        do {
            client = try await clients.client(for: app, environment: row.environment)
            created = try await client.createChannel(
                bundleID: app.bundleID,
                storagePolicy: row.storagePolicy,
                requestID: row.createRequestID
            )
        } catch {
            // Nothing was created at APNs (or, after a lost answer, reconciliation finds it).
            _ = try? await store.transitionChannel(appID: app.id, id: row.id, to: .deleted, at: clock.now)
            if let error = error as? APNSError { throw EngineError(apns: error, bundleID: app.bundleID) }
            throw error
        }
        do {
            let channel = try await store.activateChannel(
                appID: app.id,
                id: row.id,
                apnsChannelID: created.channelID,
                at: clock.now
            )
            logger.debug(
                "channel created",
                metadata: ["channel.id": "\(channel.id)", "apns.channel_id": "\(created.channelID)"]
            )
            await reportQuota(app: app, environment: row.environment)
            return channel
        } catch {
            // The row was abandoned meanwhile, or the store failed: the channel would be unknown.
            _ = try? await client.deleteChannel(bundleID: app.bundleID, channelID: created.channelID)
            _ = try? await store.transitionChannel(appID: app.id, id: row.id, to: .deleted, at: clock.now)
            throw error
        }
    }

    private func transition(_ channel: BroadcastChannel, to state: ChannelState) async throws -> BroadcastChannel {
        try await store.transitionChannel(appID: channel.appID, id: channel.id, to: state, at: clock.now)
    }
}

extension StoreError {
    /// A channel transition refused because the channel is already deleted.
    fileprivate var refusedBecauseDeleted: Bool {
        guard case .invalidTransition(_, _, let from, _) = self else { return false }
        return from == ChannelState.deleted.rawValue
    }
}
