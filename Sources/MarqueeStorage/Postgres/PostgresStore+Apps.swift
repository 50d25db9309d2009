import Foundation
import MarqueeCore
import PostgresNIO

extension PostgresStore {
    public func createApp(_ app: App) async throws {
        do {
            try await execute(
                """
                INSERT INTO apps (id, name, bundle_id, team_id, environments, created_at)
                VALUES (\(app.id.uuid), \(app.name), \(app.bundleID), \(app.teamID),
                        \(ColumnCoding.environments(app.environments)), \(app.createdAt))
                """
            )
        } catch let error as PSQLError where error.isUniqueViolation {
            throw StoreError.duplicate(entity: "app", key: app.bundleID)
        }
    }

    public func app(_ id: AppID) async throws -> App? {
        try await firstRow("SELECT \(unescaped: RowMapping.appColumns) FROM apps WHERE id = \(id.uuid)")
            .mapped(RowMapping.app)
    }

    public func apps() async throws -> [App] {
        try await rows("SELECT \(unescaped: RowMapping.appColumns) FROM apps ORDER BY created_at, id")
            .mapped(RowMapping.app)
    }

    public func storeSigningKey(_ key: SigningKey, privateKeyPEM: String) async throws {
        let (sealed, masterKeyID) = try configuration.sealSigningKey(key, privateKeyPEM: privateKeyPEM)
        do {
            let inserted = try await rows(
                """
                INSERT INTO signing_keys (id, app_id, key_id, team_id, environments, master_key_id, \
                sealed_private_key, created_at)
                SELECT \(key.id.uuid), a.id, \(key.keyID), \(key.teamID), \
                \(ColumnCoding.environments(key.environments)),
                       \(masterKeyID), \(Data(sealed)), \(key.createdAt)
                FROM apps a WHERE a.id = \(key.appID.uuid)
                RETURNING id, pg_notify(\(Self.credentialsChannel), '')
                """
            )
            guard !inserted.isEmpty else { throw StoreError.notFound(entity: "app", id: key.appID.description) }
        } catch let error as PSQLError where error.isUniqueViolation {
            throw StoreError.duplicate(entity: "signing key", key: key.keyID)
        }
    }

    public func signingKeys(appID: AppID) async throws -> [SigningKey] {
        try await rows(
            """
            SELECT \(unescaped: RowMapping.signingKeyColumns) FROM signing_keys
            WHERE app_id = \(appID.uuid) ORDER BY created_at, id
            """
        ).mapped(RowMapping.signingKey)
    }

    public func signingKeyPEM(appID: AppID, id: SigningKeyID) async throws -> String? {
        guard
            let row = try await firstRow(
                "SELECT sealed_private_key FROM signing_keys WHERE app_id = \(appID.uuid) AND id = \(id.uuid)"
            )
        else { return nil }
        return try configuration.unsealSigningKey(Array(try row.decode(Data.self)), appID: appID, id: id)
    }

    public func resealSigningKeys() async throws -> Int {
        let currentID = try configuration.requireSealer().current.id
        return try await transaction { connection in
            let stale = try await connection.query(
                """
                SELECT id, app_id, sealed_private_key FROM signing_keys
                WHERE master_key_id <> \(currentID) ORDER BY id FOR UPDATE
                """,
                logger: logger
            ).collect()
            for row in stale {
                let columns = PostgresColumns(row, entity: "signing key")
                let id: SigningKeyID = try columns.id("id")
                let (sealed, masterKeyID) = try configuration.resealSigningKey(
                    try columns.bytes("sealed_private_key"),
                    appID: try columns.id("app_id"),
                    id: id
                )
                try await connection.query(
                    """
                    UPDATE signing_keys SET sealed_private_key = \(Data(sealed)), master_key_id = \(masterKeyID)
                    WHERE id = \(id.uuid)
                    """,
                    logger: logger
                )
            }
            return stale.count
        }
    }

    public func createAPIKey(_ key: APIKey) async throws {
        do {
            guard let appID = key.appID else {
                // A deployment key has no app row to check; the table's CHECK keeps it admin.
                try await execute(
                    """
                    INSERT INTO api_keys (id, app_id, role, prefix, secret_hash, label, created_at, revoked_at)
                    VALUES (\(key.id.uuid), NULL, \(key.role.rawValue), \(key.prefix), \(Data(key.secretHash)),
                            \(key.label), \(key.createdAt), \(key.revokedAt))
                    """
                )
                return
            }
            let inserted = try await rows(
                """
                INSERT INTO api_keys (id, app_id, role, prefix, secret_hash, label, created_at, revoked_at)
                SELECT \(key.id.uuid), a.id, \(key.role.rawValue), \(key.prefix), \(Data(key.secretHash)),
                       \(key.label), \(key.createdAt), \(key.revokedAt)
                FROM apps a WHERE a.id = \(appID.uuid)
                RETURNING id
                """
            )
            guard !inserted.isEmpty else { throw StoreError.notFound(entity: "app", id: appID.description) }
        } catch let error as PSQLError where error.isUniqueViolation {
            throw StoreError.duplicate(entity: "api key", key: key.prefix)
        }
    }

    public func apiKey(prefix: String) async throws -> APIKey? {
        try await firstRow("SELECT \(unescaped: RowMapping.apiKeyColumns) FROM api_keys WHERE prefix = \(prefix)")
            .mapped(RowMapping.apiKey)
    }

    public func apiKeys(appID: AppID?) async throws -> [APIKey] {
        // Deployment keys need `IS NULL` (`= NULL` matches nothing); both forms use api_keys_app.
        let rows: [PostgresRow]
        if let appID {
            rows = try await self.rows(
                """
                SELECT \(unescaped: RowMapping.apiKeyColumns) FROM api_keys WHERE app_id = \(appID.uuid) ORDER BY \
                created_at, id
                """
            )
        } else {
            rows = try await self.rows(
                """
                SELECT \(unescaped: RowMapping.apiKeyColumns) FROM api_keys WHERE app_id IS NULL ORDER BY \
                created_at, id
                """
            )
        }
        return try rows.mapped(RowMapping.apiKey)
    }

    public func revokeAPIKey(appID: AppID?, id: APIKeyID, at: Date) async throws -> Bool {
        let revoked: [PostgresRow]
        if let appID {
            revoked = try await rows(
                """
                UPDATE api_keys SET revoked_at = \(at)
                WHERE app_id = \(appID.uuid) AND id = \(id.uuid) AND revoked_at IS NULL
                RETURNING id, pg_notify(\(Self.credentialsChannel), '')
                """
            )
        } else {
            revoked = try await rows(
                """
                UPDATE api_keys SET revoked_at = \(at)
                WHERE app_id IS NULL AND id = \(id.uuid) AND revoked_at IS NULL
                RETURNING id, pg_notify(\(Self.credentialsChannel), '')
                """
            )
        }
        return !revoked.isEmpty
    }

    public func hasAnyAPIKey() async throws -> Bool {
        try await firstRow("SELECT EXISTS (SELECT 1 FROM api_keys)")?.decode(Bool.self) ?? false
    }

    public func updateApp(_ app: App) async throws -> App {
        let updated = try await firstRow(
            """
            UPDATE apps SET name = \(app.name), environments = \(ColumnCoding.environments(app.environments))
            WHERE id = \(app.id.uuid)
            RETURNING \(unescaped: RowMapping.appColumns), pg_notify(\(Self.credentialsChannel), '')
            """
        )
        guard let updated else { throw StoreError.notFound(entity: "app", id: app.id.description) }
        return try RowMapping.app(PostgresColumns(updated, entity: "app"))
    }
}

extension PSQLError {
    /// SQLSTATE 23505.
    var isUniqueViolation: Bool { serverInfo?[.sqlState] == "23505" }
}
