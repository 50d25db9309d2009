import Logging
import MarqueeCore
import MarqueeEngine
import MarqueeStorage
import PostgresNIO
import ServiceLifecycle

/// A service that needs the assembled engine.
protocol EngineService: Sendable {
    func service(for engine: MarqueeEngine) -> any Service
}

/// LISTEN on the store's channels, on one connection of the pool for all of them (a small pool
/// must not lose a connection per channel), telling the engine of every notification, of when
/// notifications can be heard (the LISTENs are in place) and of when they cannot (before the
/// first LISTEN, and from a lost connection until it listens again).
struct PostgresNotifications: EngineService {
    /// What one channel's notifications do.
    struct Subscription: Sendable {
        let channel: String
        /// Notifications are heard from now on: called once the LISTEN is in place, again after each loss.
        var listening: @Sendable (MarqueeEngine) -> Void = { _ in }
        /// Called with each notification's payload.
        let notified: @Sendable (MarqueeEngine, String) -> Void
        /// Notifications may be missed until `listening` is called again.
        var lost: @Sendable (MarqueeEngine) -> Void = { _ in }

        /// Wakes the job worker when any replica enqueues a job, and the late-join pump when any
        /// replica queues a late joiner (both share the channel). Both still poll, so a lost
        /// connection delays them by a poll interval at most.
        static let jobs = Subscription(
            channel: PostgresStore.jobsChannel,
            notified: { engine, _ in
                engine.wakeup.signal()
                engine.lateJoinWakeup.signal()
            }
        )

        /// Makes every replica forget the API keys it authenticated when any replica revokes a key
        /// or changes an app, so a revoked key is refused everywhere as soon as the NOTIFY arrives;
        /// while the LISTEN is down the replica keeps no keys at all (`CredentialCache.suspend`).
        static let credentials = Subscription(
            channel: PostgresStore.credentialsChannel,
            listening: { $0.apps.credentials.forgetAll() },
            notified: { engine, _ in engine.apps.credentials.forgetAll() },
            lost: { $0.apps.credentials.suspend() }
        )

        /// Makes every replica forget the channel-ID answer of an event that changed on any
        /// replica (its channels, itself, its timeline's close step: the payload is its ID), so a
        /// replaced or deleted channel is answered everywhere as soon as the NOTIFY arrives; while
        /// the LISTEN is down the replica keeps no answers (`ChannelAnswerCache.suspend`).
        static let channelAnswers = Subscription(
            channel: PostgresStore.channelAnswersChannel,
            listening: { $0.events.channelAnswers.resume() },
            notified: { engine, payload in engine.events.channelAnswers.forget(eventID: EventID(uuidString: payload)) },
            lost: { $0.events.channelAnswers.suspend() }
        )
    }

    let client: PostgresClient
    let subscriptions: [Subscription]
    let logger: Logger

    func service(for engine: MarqueeEngine) -> any Service {
        // Nothing is heard until the first LISTEN is in place: what a cache kept before then
        // could miss a change.
        for subscription in subscriptions { subscription.lost(engine) }
        return Listener(client: client, subscriptions: subscriptions, engine: engine, logger: logger)
    }

    struct Listener: Service {
        let client: PostgresClient
        let subscriptions: [Subscription]
        let engine: MarqueeEngine
        let logger: Logger

        func run() async throws {
            while !Task.isCancelled && !Task.isShuttingDownGracefully {
                do {
                    try await cancelWhenGracefulShutdown {
                        try await client.withConnection { connection in
                            try await listen(on: connection, subscriptions[...], heard: [])
                        }
                    }
                    for subscription in subscriptions { subscription.lost(engine) }
                } catch {
                    for subscription in subscriptions { subscription.lost(engine) }
                    if Task.isCancelled || Task.isShuttingDownGracefully { return }
                    logger.debug("LISTEN ended; listening again", metadata: ["error": "\(String(reflecting: error))"])
                    try? await Task.sleep(for: .seconds(1))
                }
            }
        }

        /// LISTENs on each remaining channel in turn, then consumes every channel's notifications
        /// until one of them ends (the connection is gone), which ends them all.
        private func listen(
            on connection: PostgresConnection,
            _ remaining: ArraySlice<Subscription>,
            heard: [(Subscription, PostgresNotificationSequence)]
        ) async throws {
            if let next = remaining.first {
                try await connection.listen(on: next.channel) { notifications in
                    try await listen(on: connection, remaining.dropFirst(), heard: heard + [(next, notifications)])
                }
                return
            }
            for (subscription, _) in heard { subscription.listening(engine) }
            logger.debug(
                "listening for notifications",
                metadata: ["postgres.channels": "\(heard.map(\.0.channel).joined(separator: ","))"]
            )
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (subscription, notifications) in heard {
                    group.addTask {
                        for try await notification in notifications {
                            subscription.notified(engine, notification.payload)
                            // After acting on it: whoever reads this line knows that the
                            // notification, and every one before it on its channel, took effect.
                            logger.debug(
                                "notification heard",
                                metadata: [
                                    "postgres.channel": "\(subscription.channel)",
                                    "postgres.payload": "\(notification.payload)",
                                ]
                            )
                        }
                    }
                }
                try await group.next()
                group.cancelAll()
            }
        }
    }
}
