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
    /// Delivers every answered broadcast, oldest first, to its channel's subscribers as
    /// `EnvironmentWorld.deliverBroadcast` does, and fills in the outcomes of its history entry.
    /// `EmulatorState.withWorld` runs this before anything else reads or changes the world, so what
    /// anyone sees is what they would see had the delivery run with the answer. Returns what the
    /// played apps notice (activities the broadcasts ended).
    mutating func deliverAnsweredBroadcasts(configuration: APNSEmulatorConfiguration) -> [AppModelEvent] {
        guard !answeredBroadcasts.isEmpty else { return [] }
        let broadcasts = answeredBroadcasts
        answeredBroadcasts.removeAll(keepingCapacity: true)
        var appEvents: [AppModelEvent] = []
        for broadcast in broadcasts {
            var endedOn: [String] = []
            withEnvironment(broadcast.environment) { env in
                let outcomes = env.deliverBroadcast(
                    channelID: broadcast.channelID,
                    requestID: broadcast.requestID,
                    payload: broadcast.payload,
                    priority: broadcast.priority,
                    expiration: broadcast.expiration,
                    now: broadcast.admittedAt,
                    configuration: configuration,
                    endedOn: &endedOn
                )
                env.history[broadcast.channelID]?.modify(where: { $0.requestID == broadcast.requestID }) {
                    $0.outcomes = outcomes
                }
            }
            appEvents += endedOn.compactMap {
                appEventForEndedActivity(deviceID: $0, environment: broadcast.environment)
            }
        }
        return appEvents
    }
}
