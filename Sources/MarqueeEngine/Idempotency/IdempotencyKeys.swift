import Crypto
import Foundation
import MarqueeCore

/// `Idempotency-Key`s, as the IETF httpapi draft describes them: the same key with the same request
/// replays the first answer, with another request it is refused, and while the first is still
/// running a retry is told so. Keys live `retention` (24 hours by default).
///
/// A key belongs to the API key that sent it: the same `Idempotency-Key` sent with another API key
/// is claimed afresh (and that request runs, through its own role check), never answered with the
/// first key's stored answer.
public struct IdempotencyKeys: Sendable {
    let store: any IdempotencyStore
    let clock: any WallClock
    public let retention: Duration

    public init(store: any IdempotencyStore, clock: any WallClock, retention: Duration = .seconds(24 * 3600)) {
        self.store = store
        self.clock = clock
        self.retention = retention
    }

    /// The longest key accepted: keys go into the store and logs.
    public static let maximumKeyLength = 255

    /// Claims `key` for a request, identified by `fingerprint` (see `fingerprint(method:path:body:)`).
    public func claim(
        appID: AppID,
        apiKeyID: APIKeyID,
        key: String,
        fingerprint: String
    ) async throws -> IdempotencyClaim {
        guard !key.isEmpty, key.utf8.count <= Self.maximumKeyLength, key.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F })
        else {
            throw EngineError.invalidInput([
                FieldError("Idempotency-Key", "must be 1–\(Self.maximumKeyLength) printable ASCII characters")
            ])
        }
        return try await store.claimIdempotencyKey(
            appID: appID,
            apiKeyID: apiKeyID,
            key: key,
            requestHash: fingerprint,
            now: clock.now,
            ttl: retention
        )
    }

    /// Keeps the answer of a claimed request for replay.
    public func complete(appID: AppID, apiKeyID: APIKeyID, key: String, response: StoredResponse) async throws {
        try await store.completeIdempotencyKey(appID: appID, apiKeyID: apiKeyID, key: key, response: response)
    }

    /// Gives a claim back after a failure that changed nothing, so that a retry runs afresh.
    public func release(appID: AppID, apiKeyID: APIKeyID, key: String) async throws {
        try await store.releaseIdempotencyKey(appID: appID, apiKeyID: apiKeyID, key: key)
    }

    /// What makes two requests "the same": method, path with query, and the body's bytes.
    public static func fingerprint(method: String, path: String, body: some Sequence<UInt8>) -> String {
        var hasher = SHA256()
        hasher.update(data: Data("\(method) \(path)\n".utf8))
        hasher.update(data: Data(body))
        return Hex.encode(hasher.finalize())
    }
}
