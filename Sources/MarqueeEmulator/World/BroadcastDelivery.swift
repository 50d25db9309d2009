import Foundation
import MarqueeCore

/// An answered broadcast on its way to the activities its channel had when its delivery began,
/// reached a slice at a time (`EmulatorWorld.deliverAnsweredBroadcasts(activityLimit:)`), so that
/// the world's lock is never held for the whole of a large channel: requests that do not look at
/// activities (a broadcast's admission, a provider token's key) get the lock between slices.
struct BroadcastDelivery: Sendable {
    let broadcast: AnsweredBroadcast
    /// The aps members, read once for every subscriber.
    let update: ActivityUpdateFields
    let context: EnvironmentWorld.UpdateContext
    /// The channel's subscribers when the delivery began.
    let subscribers: [String]
    /// How many of `subscribers` it has reached.
    var reached = 0
    /// One per subscriber reached, in their order: the history entry's outcomes.
    var outcomes: [DeviceOutcome] = []
    /// Subscribers gone or ended: they leave the channel when the delivery finishes.
    var unsubscribed: Set<String> = []
    /// Devices whose activity the broadcast ended.
    var endedOn: [String] = []

    init(_ broadcast: AnsweredBroadcast, subscribers: [String], configuration: APNSEmulatorConfiguration) {
        self.broadcast = broadcast
        self.update = ActivityUpdateFields(broadcast.payload)
        self.context = EnvironmentWorld.UpdateContext(
            priority: broadcast.priority,
            countsAgainstBudget: false,
            now: broadcast.admittedAt,
            configuration: configuration
        )
        self.subscribers = subscribers
        outcomes.reserveCapacity(subscribers.count)
    }

    var isFinished: Bool { reached == subscribers.count }
}
