import Crypto
import MarqueeCore

/// A provider signing key the emulator accepts: a team ID, a 10-character key ID and the public half
/// of the `.p8` key, optionally restricted to some environments (team-scoped keys can be limited to
/// Sandbox or Production; a restricted key used in the other environment answers
/// `BadEnvironmentKeyIdInToken`).
public struct APNSEmulatorSigningKey: Sendable {
    public var teamID: String
    public var keyID: String
    public var publicKey: P256.Signing.PublicKey
    public var environments: Set<APNSEnvironment>

    public init(
        teamID: String,
        keyID: String,
        publicKey: P256.Signing.PublicKey,
        environments: Set<APNSEnvironment> = Set(APNSEnvironment.allCases)
    ) {
        self.teamID = teamID
        self.keyID = keyID
        self.publicKey = publicKey
        self.environments = environments
    }
}

/// A key made by the emulator for clients: the private key a provider signs with, already
/// registered with the emulator together with its app.
public struct APNSEmulatorDemoKey: Sendable, CustomStringConvertible {
    public let teamID: String
    public let keyID: String
    public let bundleID: String
    public let privateKey: P256.Signing.PrivateKey

    /// The `.p8` file's contents: PEM-encoded PKCS#8 (`-----BEGIN PRIVATE KEY-----`).
    public var p8PEM: String { privateKey.pemRepresentation }

    /// Names the key without its secret half.
    public var description: String { "APNSEmulatorDemoKey(teamID: \(teamID), keyID: \(keyID), bundleID: \(bundleID))" }
}
