/// What a token registration did.
public enum RegistrationOutcome: Sendable, Equatable {
    /// Marquee accepted it.
    case registered
    /// Marquee already has exactly this: nothing was sent.
    case unchanged
    /// Kept until ActivityKit hands over the push-to-start token, which carries it.
    case waitingForPushToStartToken
    /// The activity is a second one of its event and is being ended: its token means nothing.
    case secondActivity
}
