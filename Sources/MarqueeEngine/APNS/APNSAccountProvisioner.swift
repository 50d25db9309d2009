import MarqueeCore

/// What the APNs side must know of an app and its signing key before Marquee can push for it.
/// Apple learns it in its developer portal, so for Apple this does nothing; an emulator that Marquee
/// runs in-process is told here, so that everything works end to end without an Apple account.
public protocol APNSAccountProvisioner: Sendable {
    /// The app exists (or its team or bundle changed).
    func provision(app: App) async throws
    /// The app's signing key is installed; `privateKeyPEM` is the key's secret, to derive what the
    /// APNs side needs (a public key) and never to keep or log.
    func provision(signingKey: SigningKey, privateKeyPEM: String, of app: App) async throws
}

/// Apple's APNs: apps and keys are set up in Apple's developer portal, not by Marquee.
public struct AppleAPNSAccount: APNSAccountProvisioner {
    public init() {}
    public func provision(app: App) async throws {}
    public func provision(signingKey: SigningKey, privateKeyPEM: String, of app: App) async throws {}
}
