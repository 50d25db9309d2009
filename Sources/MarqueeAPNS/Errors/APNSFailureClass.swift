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
    /// `ChannelNotRegistered`, or `BadChannelId`: the broadcast channel no longer exists, or never
    /// did. APNs answers `BadChannelId` for a well-formed ID it never issued (`apns-reference.md`
    /// §6a), and an ID it cannot parse can never be published to either, so both mean "stop using
    /// this channel ID".
    case channelGone
    /// `BroadcastFeatureNotEnabled` (what APNs sends) or `FeatureNotEnabled` (what Apple documents):
    /// the App ID lacks the Broadcast capability. Nothing the request could change fixes it and no
    /// retry will either; only someone with the developer account can. Kept apart from
    /// `requestRejected` so that a service can tell the operator and stop creating channels for
    /// that app instead of failing request after request (build pipelines have been seen to strip
    /// the capability silently).
    case appMisconfigured
    /// The request was written and no answer came: APNs may have processed it. Sending it again may
    /// deliver it twice (a second Live Activity for a start). The client resends on its own only
    /// what a device drops as a repeat (updates and ends carry a timestamp, broadcasts likewise)
    /// and idempotent channel reads, lists and deletes; a start or a channel creation reaches the
    /// caller with this class at once.
    case uncertain
    /// Any other 4xx, or a request the client refused to send (too large, malformed): never retried.
    case requestRejected
}
