import Logging
import MarqueeCore

/// What both stores need besides their connection.
public struct StoreConfiguration: Sendable {
    /// Seals APNs signing keys; without one, storing a signing key fails.
    public var sealer: SecretSealer?
    /// Where `migrate()` reads its SQL.
    public var migrations: MigrationDirectory
    /// Stamps `schema_migrations.applied_at`; every other time comes from the caller.
    public var clock: any WallClock
    public var logger: Logger

    public init(
        sealer: SecretSealer?,
        migrations: MigrationDirectory = .resolved(),
        clock: any WallClock = SystemWallClock(),
        logger: Logger = Logger(label: "marquee.storage")
    ) {
        self.sealer = sealer
        self.migrations = migrations
        self.clock = clock
        self.logger = logger
    }

    func requireSealer() throws -> SecretSealer {
        guard let sealer else { throw SecretError.noMasterKeyConfigured }
        return sealer
    }

    /// The context a signing key's seal is bound to: its app and its row.
    static func sealContext(appID: AppID, signingKeyID: SigningKeyID) -> String {
        "signing-key/\(appID)/\(signingKeyID)"
    }
}
