import Foundation

/// What Marquee knows about an APNs token-signing key (`.p8`) without its secret. The private key
/// itself is stored encrypted at rest and handed out only by `SigningKeyStore.signingKeyPEM`.
public struct SigningKey: Sendable, Hashable, Codable {
    public var id: SigningKeyID
    public var appID: AppID
    /// Apple's 10-character key ID, the `kid` of provider tokens.
    public var keyID: String
    /// The team that issued the key, the `iss` of provider tokens.
    public var teamID: String
    /// Keys can be restricted to one environment in Apple's portal; empty means both.
    public var environments: Set<APNSEnvironment>
    public var createdAt: Date

    public init(
        id: SigningKeyID = SigningKeyID(),
        appID: AppID,
        keyID: String,
        teamID: String,
        environments: Set<APNSEnvironment> = [],
        createdAt: Date
    ) {
        self.id = id
        self.appID = appID
        self.keyID = keyID
        self.teamID = teamID
        self.environments = environments
        self.createdAt = createdAt
    }

    /// Whether provider tokens from this key are valid in `environment`.
    public func isUsable(in environment: APNSEnvironment) -> Bool {
        environments.isEmpty || environments.contains(environment)
    }
}

extension SigningKey: CustomStringConvertible {
    /// Names the key without any secret.
    public var description: String { "SigningKey(\(keyID), team \(teamID))" }
}
