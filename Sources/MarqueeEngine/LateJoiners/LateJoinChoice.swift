import MarqueeCore

/// What a start asks for its late joiners (devices whose push-to-start token is registered or
/// refreshed while the event is live).
public struct LateJoinChoice: Sendable, Hashable {
    /// `nil`: the default (on for the whole environment and for tags, off for user IDs or tokens).
    public var enabled: Bool?
    /// The alert a late joiner's start carries; `nil` for none (the start then carries an empty
    /// `alert`, which a start needs: no title, no body, no sound).
    public var alert: JSONObject?

    public init(enabled: Bool? = nil, alert: JSONObject? = nil) {
        self.enabled = enabled
        self.alert = alert
    }
}
