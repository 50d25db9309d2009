import Foundation
import MarqueeCore
import SQLiteNIO

extension SQLiteStore {
    public func createApp(_ app: App) async throws {
        do {
            _ = try await query(
                "INSERT INTO apps (id, name, bundle_id, team_id, environments, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                [
                    .id(app.id), .text(app.name), .text(app.bundleID), .text(app.teamID),
                    .text(ColumnCoding.environments(app.environments)), .date(app.createdAt),
                ]
            )
        } catch let error as SQLiteError where error.isUniqueViolation {
            throw StoreError.duplicate(entity: "app", key: app.bundleID)
        }
    }

    public func app(_ id: AppID) async throws -> App? {
        try await query("SELECT \(RowMapping.appColumns) FROM apps WHERE id = ?", [.id(id)]).first.mapped(
            RowMapping.app
        )
    }

    public func apps() async throws -> [App] {
        try await query("SELECT \(RowMapping.appColumns) FROM apps ORDER BY created_at, id").mapped(RowMapping.app)
    }

    public func storeSigningKey(_ key: SigningKey, privateKeyPEM: String) async throws {
        let (sealed, masterKeyID) = try configuration.sealSigningKey(key, privateKeyPEM: privateKeyPEM)
        do {
            let inserted = try await query(
                """
                INSERT INTO signing_keys (id, app_id, key_id, team_id, environments, master_key_id, \
                sealed_private_key, created_at)
                SELECT ?, a.id, ?, ?, ?, ?, ?, ? FROM apps a WHERE a.id = ?
                RETURNING id
                """,
                [
                    .id(key.id), .text(key.keyID), .text(key.teamID),
                    .text(ColumnCoding.environments(key.environments)),
                    .text(masterKeyID), .bytes(sealed), .date(key.createdAt), .id(key.appID),
                ]
            )
            guard !inserted.isEmpty else { throw StoreError.notFound(entity: "app", id: key.appID.description) }
        } catch let error as SQLiteError where error.isUniqueViolation {
            throw StoreError.duplicate(entity: "signing key", key: key.keyID)
        }
    }

    public func signingKeys(appID: AppID) async throws -> [SigningKey] {
        try await query(
            "SELECT \(RowMapping.signingKeyColumns) FROM signing_keys WHERE app_id = ? ORDER BY created_at, id",
            [.id(appID)]
        ).mapped(RowMapping.signingKey)
    }

    public func signingKeyPEM(appID: AppID, id: SigningKeyID) async throws -> String? {
        guard
            let row = try await query(
                "SELECT sealed_private_key FROM signing_keys WHERE app_id = ? AND id = ?",
                [.id(appID), .id(id)]
            ).first
        else { return nil }
        let sealed = try SQLiteColumns(row, entity: "signing key").bytes("sealed_private_key")
        return try configuration.unsealSigningKey(sealed, appID: appID, id: id)
    }

    public func resealSigningKeys() async throws -> Int {
        let currentID = try configuration.requireSealer().current.id
        return try await write { connection in
            let stale = try await connection.query(
                "SELECT id, app_id, sealed_private_key FROM signing_keys WHERE master_key_id <> ? ORDER BY id",
                [.text(currentID)]
            )
            for row in stale {
                let columns = SQLiteColumns(row, entity: "signing key")
                let id: SigningKeyID = try columns.id("id")
                let (sealed, masterKeyID) = try configuration.resealSigningKey(
                    try columns.bytes("sealed_private_key"),
                    appID: try columns.id("app_id"),
                    id: id
                )
                _ = try await connection.query(
                    "UPDATE signing_keys SET sealed_private_key = ?, master_key_id = ? WHERE id = ?",
                    [.bytes(sealed), .text(masterKeyID), .id(id)]
                )
            }
            return stale.count
        }
    }

    public func createAPIKey(_ key: APIKey) async throws {
        do {
            guard let appID = key.appID else {
                // A deployment key has no app row to check; the table's CHECK keeps it admin.
                _ = try await query(
                    """
                    INSERT INTO api_keys (id, app_id, role, prefix, secret_hash, label, created_at, revoked_at)
                    VALUES (?, NULL, ?, ?, ?, ?, ?, ?)
                    """,
                    [
                        .id(key.id), .text(key.role.rawValue), .text(key.prefix), .bytes(key.secretHash),
                        .text(key.label),
                        .date(key.createdAt), .date(key.revokedAt),
                    ]
                )
                return
            }
            let inserted = try await query(
                """
                INSERT INTO api_keys (id, app_id, role, prefix, secret_hash, label, created_at, revoked_at)
                SELECT ?, a.id, ?, ?, ?, ?, ?, ? FROM apps a WHERE a.id = ?
                RETURNING id
                """,
                [
                    .id(key.id), .text(key.role.rawValue), .text(key.prefix), .bytes(key.secretHash), .text(key.label),
                    .date(key.createdAt), .date(key.revokedAt), .id(appID),
                ]
            )
            guard !inserted.isEmpty else { throw StoreError.notFound(entity: "app", id: appID.description) }
        } catch let error as SQLiteError where error.isUniqueViolation {
            throw StoreError.duplicate(entity: "api key", key: key.prefix)
        }
    }

    public func apiKey(prefix: String) async throws -> APIKey? {
        try await query("SELECT \(RowMapping.apiKeyColumns) FROM api_keys WHERE prefix = ?", [.text(prefix)])
            .first.mapped(RowMapping.apiKey)
    }

    public func apiKeys(appID: AppID?) async throws -> [APIKey] {
        // `app_id IS ?` matches NULL to NULL (deployment keys) and can still use api_keys_app.
        try await query(
            "SELECT \(RowMapping.apiKeyColumns) FROM api_keys WHERE app_id IS ? ORDER BY created_at, id",
            [.id(appID)]
        ).mapped(RowMapping.apiKey)
    }

    public func revokeAPIKey(appID: AppID?, id: APIKeyID, at: Date) async throws -> Bool {
        try await !query(
            "UPDATE api_keys SET revoked_at = ? WHERE app_id IS ? AND id = ? AND revoked_at IS NULL RETURNING id",
            [.date(at), .id(appID), .id(id)]
        ).isEmpty
    }

    public func hasAnyAPIKey() async throws -> Bool {
        try await !query("SELECT 1 FROM api_keys LIMIT 1").isEmpty
    }

    public func updateApp(_ app: App) async throws -> App {
        let updated = try await query(
            "UPDATE apps SET name = ?, environments = ? WHERE id = ? RETURNING \(RowMapping.appColumns)",
            [.text(app.name), .text(ColumnCoding.environments(app.environments)), .id(app.id)]
        )
        guard let row = updated.first else { throw StoreError.notFound(entity: "app", id: app.id.description) }
        return try RowMapping.app(SQLiteColumns(row, entity: "app"))
    }
}
