/// What `TokenStore.registerPushToStartTokens` did.
public struct TokenRegistrationOutcome: Sendable, Equatable {
    /// Registrations written (inserted or refreshed), after duplicates in the batch were folded.
    public var written: Int
    /// Pending starts queued for late joiners among them.
    public var lateJoinersQueued: Int
    /// The rows as written, when asked for; in no particular order.
    public var tokens: [PushToStartToken]

    public init(written: Int, lateJoinersQueued: Int, tokens: [PushToStartToken] = []) {
        self.written = written
        self.lateJoinersQueued = lateJoinersQueued
        self.tokens = tokens
    }
}
