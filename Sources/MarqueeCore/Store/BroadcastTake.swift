/// An event's active channel in one environment as a broadcast takes it: the channel with the next
/// `aps.timestamp` taken on it (`lastBroadcastTimestamp`, as `ChannelStore.takeBroadcastTimestamp`
/// takes it), and the accepted priority-10 broadcasts it sent since the budget window's start.
public struct BroadcastTake: Sendable, Hashable {
    public var channel: BroadcastChannel
    public var immediateSent: Int

    public init(channel: BroadcastChannel, immediateSent: Int) {
        self.channel = channel
        self.immediateSent = immediateSent
    }
}
