import Foundation

/// A tenant: one iOS app (bundle ID) of one Apple developer team. Every other row belongs to exactly
/// one app, and every store operation is scoped by it.
public struct App: Sendable, Hashable, Codable {
    public var id: AppID
    /// A human name for dashboards and logs.
    public var name: String
    /// The app's bundle ID; the `apns-topic` and channel-management paths derive from it.
    public var bundleID: String
    /// The Apple developer team that owns the app and its APNs signing keys.
    public var teamID: String
    /// The APNs environments this app may use. Channels and tokens exist per environment.
    public var environments: Set<APNSEnvironment>
    /// The signing key used for provider tokens, if one has been stored.
    public var signingKeyID: SigningKeyID?
    public var createdAt: Date

    public init(
        id: AppID = AppID(),
        name: String,
        bundleID: String,
        teamID: String,
        environments: Set<APNSEnvironment>,
        signingKeyID: SigningKeyID? = nil,
        createdAt: Date
    ) {
        self.id = id
        self.name = name
        self.bundleID = bundleID
        self.teamID = teamID
        self.environments = environments
        self.signingKeyID = signingKeyID
        self.createdAt = createdAt
    }
}
