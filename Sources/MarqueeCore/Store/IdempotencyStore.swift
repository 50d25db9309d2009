import Foundation

/// `Idempotency-Key`s of API requests, each kept per API key: the same `Idempotency-Key` sent with
/// another API key (of the same app or not) is another key altogether, so that a replay never hands
/// one key's answer to another (whose role may not allow the request).
public protocol IdempotencyStore: Sendable {
    /// Claims the key for a request, atomically: the first caller gets `.claimed`; later callers
    /// see the stored response, `.inProgress`, or `.mismatch` for a different request. An expired
    /// key is claimed afresh.
    func claimIdempotencyKey(
        appID: AppID,
        apiKeyID: APIKeyID,
        key: String,
        requestHash: String,
        now: Date,
        ttl: Duration
    ) async throws -> IdempotencyClaim
    /// Stores the response of the claimed request for replay.
    func completeIdempotencyKey(appID: AppID, apiKeyID: APIKeyID, key: String, response: StoredResponse) async throws
    /// Gives up a claim whose request failed before it changed anything, so a retry can run.
    func releaseIdempotencyKey(appID: AppID, apiKeyID: APIKeyID, key: String) async throws
    /// Deletes expired keys of every app; returns how many.
    func purgeExpiredIdempotencyKeys(now: Date) async throws -> Int
}
