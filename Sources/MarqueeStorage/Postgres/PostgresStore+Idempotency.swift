import Foundation
import MarqueeCore
import PostgresNIO

extension PostgresStore {
    public func claimIdempotencyKey(
        appID: AppID,
        apiKeyID: APIKeyID,
        key: String,
        requestHash: String,
        now: Date,
        ttl: Duration
    ) async throws -> IdempotencyClaim {
        // Inserts the claim, or takes over an expired one; a live row is left alone and read back.
        // A row released or purged between the two statements sends the loop round again.
        for _ in 0..<3 {
            let claimed = try await rows(
                """
                INSERT INTO idempotency_keys AS k (app_id, api_key_id, key, request_hash, created_at, expires_at)
                SELECT a.id, \(apiKeyID.uuid), \(key), \(requestHash), \(now), \(now.adding(ttl)) FROM apps a WHERE \
                a.id = \(appID.uuid)
                ON CONFLICT (app_id, api_key_id, key) DO UPDATE SET
                    request_hash = EXCLUDED.request_hash, created_at = EXCLUDED.created_at, expires_at = \
                EXCLUDED.expires_at,
                    response_status = NULL, response_content_type = NULL, response_body = NULL
                WHERE k.expires_at <= EXCLUDED.created_at
                RETURNING key
                """
            )
            if !claimed.isEmpty { return .claimed }
            let existing = try await firstRow(
                """
                SELECT \(unescaped: RowMapping.idempotencyColumns) FROM idempotency_keys
                WHERE app_id = \(appID.uuid) AND api_key_id = \(apiKeyID.uuid) AND key = \(key)
                """
            )
            if let existing {
                let columns = PostgresColumns(existing, entity: "idempotency key")
                return IdempotencyClaim(
                    existingRequestHash: try columns.string("request_hash"),
                    requestHash: requestHash,
                    response: try RowMapping.storedResponse(columns)
                )
            }
            guard try await app(appID) != nil else { break }
        }
        throw StoreError.notFound(entity: "app", id: appID.description)
    }

    public func completeIdempotencyKey(
        appID: AppID,
        apiKeyID: APIKeyID,
        key: String,
        response: StoredResponse
    ) async throws {
        let updated = try await rows(
            """
            UPDATE idempotency_keys
            SET response_status = \(response.status), response_content_type = \(response.contentType),
                response_body = \(Data(response.body))
            WHERE app_id = \(appID.uuid) AND api_key_id = \(apiKeyID.uuid) AND key = \(key)
            RETURNING key
            """
        )
        guard !updated.isEmpty else { throw StoreError.notFound(entity: "idempotency key", id: key) }
    }

    public func releaseIdempotencyKey(appID: AppID, apiKeyID: APIKeyID, key: String) async throws {
        try await execute(
            """
            DELETE FROM idempotency_keys
            WHERE app_id = \(appID.uuid) AND api_key_id = \(apiKeyID.uuid) AND key = \(key) AND response_status IS NULL
            """
        )
    }

    public func purgeExpiredIdempotencyKeys(now: Date) async throws -> Int {
        try await rows("DELETE FROM idempotency_keys WHERE expires_at <= \(now) RETURNING key").count
    }
}
