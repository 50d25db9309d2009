/// A channel as the channel list shows it: the row and the key its producer gave the event, read in
/// the same statement (`nil` for an orphan or a channel whose event was purged).
public struct ListedChannel: Sendable, Hashable {
    public var channel: BroadcastChannel
    public var eventKey: String?

    public init(channel: BroadcastChannel, eventKey: String?) {
        self.channel = channel
        self.eventKey = eventKey
    }
}
