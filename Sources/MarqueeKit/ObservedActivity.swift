/// One Live Activity as ActivityKit lists it now: what the census needs of it, nothing else.
public struct ObservedActivity: Sendable, Equatable, Hashable, Codable {
    /// ActivityKit's `Activity.id`.
    public var id: String
    /// The producer's event key, from the activity's attributes.
    public var eventKey: String
    public var state: State

    /// ActivityKit's `ActivityState`, as far as presence goes.
    public enum State: String, Sendable, Codable, Hashable {
        /// On the Lock Screen and the Dynamic Island, updating.
        case active
        /// Past its stale date: still on screen, so it still counts as showing.
        case stale
        /// Over, still on the Lock Screen until it is dismissed.
        case ended
        /// Removed from the Lock Screen (by the user or the system).
        case dismissed

        /// Whether the activity is there and live: the event is showing on this device.
        public var isLive: Bool { self == .active || self == .stale }
    }

    public init(id: String, eventKey: String, state: State) {
        self.id = id
        self.eventKey = eventKey
        self.state = state
    }
}
