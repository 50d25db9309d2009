import Foundation
import MarqueeCore

/// The server's defaults for events' timelines (`timeline.*` configuration); an event's own
/// overrides win.
public struct TimelinePolicy: Sendable, Hashable {
    /// How long before the planned start the channels are created (`timeline.channelLeadSeconds`).
    public var channelLead: TimeInterval
    /// How long before Apple's 8-hour limit the automatic end is sent (`timeline.endMarginSeconds`).
    public var endMargin: TimeInterval
    /// How long after the end the event is closed: Apple's Lock Screen window.
    public var deleteChannelsAfter: TimeInterval

    public init(
        channelLead: TimeInterval = 3600,
        endMargin: TimeInterval = 900,
        deleteChannelsAfter: TimeInterval = EventTimeline.lockScreenWindow
    ) {
        self.channelLead = channelLead
        self.endMargin = min(max(0, endMargin), EventTimeline.activityLifetime - 60)
        self.deleteChannelsAfter = deleteChannelsAfter
    }

    /// The durations an event's timeline runs by.
    public func durations(for settings: EventTimelineSettings?) -> EventTimeline.Durations {
        EventTimeline.Durations(
            channelLead: settings?.channelLeadSeconds.map(TimeInterval.init) ?? channelLead,
            endAfter: settings?.endAfterSeconds.map(TimeInterval.init) ?? EventTimeline.activityLifetime - endMargin,
            deleteChannelsAfter: settings?.deleteChannelsAfterSeconds.map(TimeInterval.init) ?? deleteChannelsAfter
        )
    }

    /// The ranges an event's overrides must fall in.
    static let channelLeadRange = 0...(7 * 24 * 3600)
    static let endAfterRange = 60...Int(EventTimeline.activityLifetime)
    static let deleteChannelsAfterRange = 0...(24 * 3600)
}
