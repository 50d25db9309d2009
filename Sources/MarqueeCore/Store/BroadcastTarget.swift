/// An event as a broadcast reads it, in one step: the event, and the environments in which it has
/// activities that take device pushes (not ended, on no channel, with an update token in use), so
/// that a broadcast to an event without such activities reads nothing more.
public struct BroadcastTarget: Sendable, Hashable {
    public var event: Event
    public var updateTokenEnvironments: Set<APNSEnvironment>
    /// What `EventStore.beginBroadcast` took for the broadcast: per environment, the event's active
    /// channel with its next timestamp; empty for `broadcastTarget`, which takes nothing.
    public var taken: [APNSEnvironment: BroadcastTake]

    public init(
        event: Event,
        updateTokenEnvironments: Set<APNSEnvironment>,
        taken: [APNSEnvironment: BroadcastTake] = [:]
    ) {
        self.event = event
        self.updateTokenEnvironments = updateTokenEnvironments
        self.taken = taken
    }
}
