import Foundation
import Logging
import MarqueeCore
import MarqueeStorage
import PostgresNIO

/// The store `marquee serve` runs on, opened and migrated, with what must run while it is used.
struct OpenedStore: Sendable {
    let store: any MarqueeStore
    /// Runs the PostgreSQL pool; `nil` for SQLite.
    let postgresClient: PostgresClient?
    let description: String
    let close: @Sendable () async -> Void

    /// Opens the configured store. For PostgreSQL the caller must already be running
    /// `postgresClient` (see `MarqueeServer.run`), so the client is made by `postgresClient(for:)`.
    static func sqlite(
        configuration: ServerConfiguration,
        storeConfiguration: StoreConfiguration
    ) async throws -> OpenedStore {
        let store = try await SQLiteStore.open(path: configuration.sqlitePath, configuration: storeConfiguration)
        do {
            try await store.migrate()
        } catch {
            try? await store.close()
            throw error
        }
        return OpenedStore(
            store: store,
            postgresClient: nil,
            description: "SQLite \(configuration.sqlitePath)",
            // Closing must happen even when the serving task was cancelled (a signal, a test's end):
            // an unstructured task does not inherit the cancellation.
            close: { await Task { try? await store.close() }.value }
        )
    }

    static func postgres(
        client: PostgresClient,
        target: PostgresConnectionURL,
        callTimeout: Duration,
        startupWait: Duration,
        storeConfiguration: StoreConfiguration
    ) async throws -> OpenedStore {
        let store = PostgresStore(client: client, configuration: storeConfiguration, callTimeout: callTimeout)
        do {
            // One patience for both: the direct check names an unreachable server at once, and the
            // pool's first connections may still fail a while under load (its circuit breaker).
            try await target.retryingWhileUnavailable(patience: startupWait, logger: storeConfiguration.logger) {
                try await target.checkConnection(logger: storeConfiguration.logger)
                try await store.migrate()
            }
        } catch let error as MigrationError {
            throw error
        } catch {
            throw PostgresUnavailableError(target: target, underlying: error)
        }
        return OpenedStore(
            store: store,
            postgresClient: client,
            description: "PostgreSQL \(target.location)",
            close: {}
        )
    }

    /// The sealer for signing keys: the configured keyring, or on the embedded default a key made
    /// once and kept in the data folder (0600), so that a laptop needs no setup.
    static func sealer(configuration: ServerConfiguration, logger: Logger) throws -> SecretSealer {
        if let keyring = configuration.masterKeys {
            do {
                return try SecretSealer(keyring: keyring)
            } catch {
                throw ConfigurationError(key: "secrets.masterKeys", "\(error)")
            }
        }
        let path = (configuration.dataDirectory as NSString).appendingPathComponent("master.key")
        let files = FileManager.default
        if let existing = files.contents(atPath: path), let text = String(data: existing, encoding: .utf8) {
            do {
                return try SecretSealer(keyring: text.trimmingCharacters(in: .whitespacesAndNewlines))
            } catch {
                throw ConfigurationError(
                    key: "secrets.masterKeys",
                    "the generated key file \(path) is damaged: \(error)"
                )
            }
        }
        // Owner-only, as the SQLite files beside it.
        try files.createDirectory(
            atPath: configuration.dataDirectory,
            withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700]
        )
        let keyring = "local-1:\(MasterKey.generateBase64())"
        guard files.createFile(atPath: path, contents: Data(keyring.utf8), attributes: [.posixPermissions: 0o600])
        else {
            throw ConfigurationError(key: "data.dir", "cannot write \(path)")
        }
        logger.notice("generated a master key for sealing signing keys", metadata: ["file": "\(path)"])
        return try SecretSealer(keyring: keyring)
    }
}
