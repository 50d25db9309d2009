/// How a channel deletion ended. Both cases mean the channel is gone; callers that reconcile their
/// own records treat them alike, and log the second.
public enum APNSChannelDeletion: Sendable, Hashable {
    /// APNs answered 204: this request deleted the channel.
    case deleted(requestID: String?)
    /// APNs did not know the channel: deleted before (a second delete, or a retry after a crash
    /// whose first attempt got through), or never created. The rejection is kept as APNs sent it:
    /// 404 `BadPath` from Apple's servers, or 400 `ChannelNotRegistered` as documented.
    case alreadyGone(APNSRejection)
}
