import Foundation
import MarqueeCore
import SQLiteNIO

extension SQLiteStore {
    public func claimIdempotencyKey(
        appID: AppID,
        apiKeyID: APIKeyID,
        key: String,
        requestHash: String,
        now: Date,
        ttl: Duration
    ) async throws -> IdempotencyClaim {
        try await write { connection in
            let existing = try await connection.query(
                """
                SELECT \(RowMapping.idempotencyColumns) FROM idempotency_keys WHERE app_id = ? AND api_key_id = ? AND \
                key = ?
                """,
                [.id(appID), .id(apiKeyID), .text(key)]
            ).first
            if let existing {
                let columns = SQLiteColumns(existing, entity: "idempotency key")
                if try columns.date("expires_at") > now {
                    let response = try RowMapping.storedResponse(columns)
                    return IdempotencyClaim(
                        existingRequestHash: try columns.string("request_hash"),
                        requestHash: requestHash,
                        response: response
                    )
                }
            }
            let claimed = try await connection.query(
                """
                INSERT INTO idempotency_keys (app_id, api_key_id, key, request_hash, created_at, expires_at)
                SELECT a.id, ?, ?, ?, ?, ? FROM apps a WHERE a.id = ?
                ON CONFLICT (app_id, api_key_id, key) DO UPDATE SET
                    request_hash = excluded.request_hash, created_at = excluded.created_at,
                    expires_at = excluded.expires_at, response_status = NULL, response_content_type = NULL,
                    response_body = NULL
                RETURNING key
                """,
                [.id(apiKeyID), .text(key), .text(requestHash), .date(now), .date(now.adding(ttl)), .id(appID)]
            )
            guard !claimed.isEmpty else { throw StoreError.notFound(entity: "app", id: appID.description) }
            return .claimed
        }
    }

    public func completeIdempotencyKey(
        appID: AppID,
        apiKeyID: APIKeyID,
        key: String,
        response: StoredResponse
    ) async throws {
        let updated = try await query(
            """
            UPDATE idempotency_keys SET response_status = ?, response_content_type = ?, response_body = ?
            WHERE app_id = ? AND api_key_id = ? AND key = ? RETURNING key
            """,
            [
                .int(response.status), .text(response.contentType), .bytes(response.body), .id(appID), .id(apiKeyID),
                .text(key),
            ]
        )
        guard !updated.isEmpty else { throw StoreError.notFound(entity: "idempotency key", id: key) }
    }

    public func releaseIdempotencyKey(appID: AppID, apiKeyID: APIKeyID, key: String) async throws {
        _ = try await query(
            "DELETE FROM idempotency_keys WHERE app_id = ? AND api_key_id = ? AND key = ? AND response_status IS NULL",
            [.id(appID), .id(apiKeyID), .text(key)]
        )
    }

    public func purgeExpiredIdempotencyKeys(now: Date) async throws -> Int {
        try await query("DELETE FROM idempotency_keys WHERE expires_at <= ? RETURNING key", [.date(now)]).count
    }
}
