/// An event as a broadcast reads it, in one step: the event, and the environments in which it has
/// activities that take device pushes (not ended, on no channel, with an update token in use), so
/// that a broadcast to an event without such activities reads nothing more.
public struct BroadcastTarget: Sendable, Hashable {
    public var event: Event
    public var updateTokenEnvironments: Set<APNSEnvironment>

    public init(event: Event, updateTokenEnvironments: Set<APNSEnvironment>) {
        self.event = event
        self.updateTokenEnvironments = updateTokenEnvironments
    }
}
