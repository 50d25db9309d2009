import MarqueeCore

extension ChannelStore {
    /// Tells this process that the event's channel-ID answer changed, once the change has
    /// committed; on PostgreSQL other replicas hear of it from the NOTIFY its statement made.
    func announceChannelAnswer(of eventID: EventID?) {
        if let eventID { channelAnswerChanges.changed(eventID) }
    }

    /// `announceChannelAnswer` for a channel that a committed statement returned.
    func announced(_ channel: BroadcastChannel) -> BroadcastChannel {
        announceChannelAnswer(of: channel.eventID)
        return channel
    }
}
