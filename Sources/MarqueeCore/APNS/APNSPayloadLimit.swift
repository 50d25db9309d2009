/// The largest bodies APNs accepts, compared against the byte length of the JSON.
public enum APNSPayloadLimit {
    /// Device pushes (every push type but VoIP), Live Activity pushes included.
    public static let device = 4096
    /// VoIP device pushes.
    public static let voip = 5120
    /// Broadcasts on a channel.
    public static let broadcast = 5120
    /// Channels per app and environment; one more answers `CannotCreateChannelConfig`.
    public static let channelsPerApp = 10_000
    /// The longest `apns-collapse-id`.
    public static let collapseIDBytes = 64
}
