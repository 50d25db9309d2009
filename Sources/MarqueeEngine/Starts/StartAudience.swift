/// Whom a start reaches among the push-to-start tokens of the event's attributes type in one
/// environment: everyone, or those matching any of the given tags, user IDs or tokens.
public struct StartAudience: Sendable, Hashable {
    public var tags: [String]
    public var userIDs: [String]
    /// Lower-case hex.
    public var tokens: [String]

    public init(tags: [String] = [], userIDs: [String] = [], tokens: [String] = []) {
        self.tags = tags
        self.userIDs = userIDs
        self.tokens = tokens.map { $0.lowercased() }
    }

    public var isEveryone: Bool { tags.isEmpty && userIDs.isEmpty && tokens.isEmpty }
}
