/// Which APNs the emulator plays where Apple's servers and Apple's documentation disagree
/// (`apns-reference.md` §6a). A profile only chooses the starting values of the settings it names;
/// each stays a field of ``APNSEmulatorConfiguration`` that can be set on its own.
public enum APNSEmulatorProfile: String, Sendable, Hashable, Codable, CaseIterable {
    /// What Apple's servers were seen answering, the default, because production is what Marquee
    /// meets: `BroadcastFeatureNotEnabled` for a bundle without the Broadcast capability, 404
    /// `BadPath` for a `DELETE` of an unknown or deleted channel, `BadChannelId` for a broadcast to a
    /// well-formed channel ID that never existed, and `BadExpirationDate` for a broadcast without
    /// `apns-expiration`.
    case observed
    /// What Apple's documentation says: `FeatureNotEnabled`, `ChannelNotRegistered` for every unknown
    /// or deleted channel, and a broadcast without `apns-expiration` accepted as in Apple's own curl
    /// examples.
    case documented
}
