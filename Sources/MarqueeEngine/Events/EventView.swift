import MarqueeCore

/// An event with its live channels, as the API shows it.
public struct EventView: Sendable, Hashable {
    public var event: Event
    /// Live channels (creating, active, deleting), one per environment at most.
    public var channels: [BroadcastChannel]

    public init(event: Event, channels: [BroadcastChannel]) {
        self.event = event
        self.channels = channels
    }
}

/// An open event's channel in one environment, for the apps that subscribe to it.
public struct LiveEvent: Sendable, Hashable {
    public var event: Event
    public var channel: BroadcastChannel
}
