import Foundation

/// `Idempotency-Key`s of API requests.
public protocol IdempotencyStore: Sendable {
    /// Claims the key for a request, atomically: the first caller gets `.claimed`; later callers
    /// see the stored response, `.inProgress`, or `.mismatch` for a different request. An expired
    /// key is claimed afresh.
    func claimIdempotencyKey(
        appID: AppID,
        key: String,
        requestHash: String,
        now: Date,
        ttl: Duration
    ) async throws -> IdempotencyClaim
    /// Stores the response of the claimed request for replay.
    func completeIdempotencyKey(appID: AppID, key: String, response: StoredResponse) async throws
    /// Gives up a claim whose request failed before it changed anything, so a retry can run.
    func releaseIdempotencyKey(appID: AppID, key: String) async throws
    /// Deletes expired keys of every app; returns how many.
    func purgeExpiredIdempotencyKeys(now: Date) async throws -> Int
}
