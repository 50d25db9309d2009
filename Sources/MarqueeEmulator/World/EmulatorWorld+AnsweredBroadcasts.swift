import Foundation
import MarqueeCore

/// A broadcast APNs has admitted and answered whose subscribers it has not reached yet. APNs answers
/// a broadcast once it takes it and fans it out afterwards; the emulator does the same, so that the
/// answer does not wait for a walk over every subscribed activity (a 66,000-subscriber channel took
/// 0.2–0.3 s under the world's lock).
struct AnsweredBroadcast: Sendable {
    var environment: APNSEnvironment
    var channelID: String
    var requestID: String
    var payload: PushPayload?
    var priority: APNSPriority
    var expiration: Int64?
    /// When APNs took it: the delivery is judged at this time, whenever it runs.
    var admittedAt: Date
}

extension EmulatorWorld {
    /// Delivers answered broadcasts, oldest first, to their channels' subscribers
    /// (`EnvironmentWorld.deliverBroadcast`), reaching at most `activityLimit` activities, and fills
    /// in each finished one's history entry. With no limit, every answered broadcast is delivered:
    /// `EmulatorState.withWorld` runs it so before anything else reads or changes the world, so
    /// what anyone sees is what they would see had the delivery run with the answer. Returns what
    /// the played apps notice (activities the broadcasts ended) and whether nothing is left.
    mutating func deliverAnsweredBroadcasts(
        configuration: APNSEmulatorConfiguration,
        activityLimit: Int = .max
    ) -> (appEvents: [AppModelEvent], finished: Bool) {
        var appEvents: [AppModelEvent] = []
        var budget = activityLimit
        while budget > 0 {
            // Taken out, not copied: a copy left in `deliveryInProgress` would make the first
            // outcome appended copy every outcome so far, each slice, under the world's lock (for
            // a 100,000-subscriber channel, about five million copies per broadcast).
            guard var delivery = deliveryInProgress.take() ?? beginNextDelivery(configuration: configuration) else {
                return (appEvents, true)
            }
            let remaining = delivery.subscribers.count - delivery.reached
            let slice = delivery.subscribers[delivery.reached..<delivery.reached + min(budget, remaining)]
            let environment = delivery.broadcast.environment
            withEnvironment(environment) { $0.deliverBroadcast(&delivery, to: slice) }
            delivery.reached = slice.endIndex
            budget -= slice.count
            guard delivery.isFinished else {
                deliveryInProgress = delivery
                return (appEvents, false)
            }
            withEnvironment(environment) { $0.finishBroadcastDelivery(delivery) }
            appEvents += delivery.endedOn.compactMap {
                appEventForEndedActivity(deviceID: $0, environment: environment)
            }
        }
        return (appEvents, deliveryInProgress == nil && answeredBroadcasts.isEmpty)
    }

    /// The oldest answered broadcast's delivery, begun; nil if none is waiting. A broadcast whose
    /// channel is gone reaches nobody.
    private mutating func beginNextDelivery(configuration: APNSEmulatorConfiguration) -> BroadcastDelivery? {
        guard !answeredBroadcasts.isEmpty else { return nil }
        let broadcast = answeredBroadcasts.removeFirst()
        let subscribers = withEnvironment(broadcast.environment) { $0.beginBroadcastDelivery(broadcast) }
        return BroadcastDelivery(broadcast, subscribers: subscribers ?? [], configuration: configuration)
    }
}
