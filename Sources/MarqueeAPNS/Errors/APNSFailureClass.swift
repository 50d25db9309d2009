/// The one classification callers act on, whatever the failure was.
public enum APNSFailureClass: Sendable, Hashable, CaseIterable {
    /// 429 `TooManyRequests`, 500, 503 or a lost connection: try again later with back-off.
    /// The client has already done so up to its retry policy's limit.
    case retryLater
    /// `ExpiredProviderToken`: sign a new token and retry once. The client does this itself; a caller
    /// sees it only when the retry was refused too.
    case renewTokenAndRetry
    /// 410 `Unregistered`/`ExpiredToken`, `BadDeviceToken`, `DeviceTokenNotForTopic`: stop using the
    /// device token.
    case tokenDead
    /// `ChannelNotRegistered`: the broadcast channel no longer exists.
    case channelGone
    /// Any other 4xx, or a request the client refused to send (too large, malformed): never retried.
    case requestRejected
}
