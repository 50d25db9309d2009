/// The Live Activity event a broadcast carries. A broadcast cannot start an activity.
public enum BroadcastEvent: String, Sendable, Hashable, Codable, CaseIterable {
    case update
    case end
}
