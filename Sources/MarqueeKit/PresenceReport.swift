/// What the device says about one event: the body of a presence report, without the transport.
public struct PresenceReport: Sendable, Equatable, Hashable, Codable {
    public var eventKey: String
    public var state: State
    /// ActivityKit's `Activity.id`; with `showing` only.
    public var activityID: String?

    /// The states Marquee's presence endpoint takes.
    public enum State: String, Sendable, Codable, Hashable {
        /// An activity of the event is on screen (active or stale).
        case showing
        /// The event's activity ended and is still on the Lock Screen.
        case ended
        /// The event's activity was there and is gone: the user or the system removed it.
        case dismissed
        /// The app runs, the event concerns it, and no activity of it is there.
        case absent
    }

    public init(eventKey: String, state: State, activityID: String? = nil) {
        self.eventKey = eventKey
        self.state = state
        self.activityID = state == .showing ? activityID : nil
    }
}
