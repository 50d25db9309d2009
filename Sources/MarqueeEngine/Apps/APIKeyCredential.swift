import Crypto
import Foundation
import MarqueeCore

/// The key a client presents: `mq_<prefix>_<secret>`. The prefix is public and finds the row; the
/// whole string is hashed with SHA-256 and only the hash is stored. The secret has 256 bits of
/// entropy, so a plain hash is enough (no slow password hash needed).
public struct APIKeyCredential: Sendable {
    static let scheme = "mq"

    /// The full key, shown once to whoever created it.
    public let presented: String
    public let prefix: String

    /// A fresh random key.
    public static func generate() -> APIKeyCredential {
        var generator = SystemRandomNumberGenerator()
        let prefixBytes = (0..<6).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let secretBytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let prefix = Hex.encode(prefixBytes)
        let secret = Base64URL.encode(secretBytes)
        return APIKeyCredential(presented: "\(scheme)_\(prefix)_\(secret)", prefix: prefix)
    }

    /// Parses a presented key; `nil` if it is not shaped like one.
    public init?(presented: String) {
        let parts = presented.split(separator: "_", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == Self.scheme, !parts[1].isEmpty, parts[2].count >= 16 else { return nil }
        self.init(presented: presented, prefix: String(parts[1]))
    }

    private init(presented: String, prefix: String) {
        self.presented = presented
        self.prefix = prefix
    }

    public var hash: [UInt8] { Array(SHA256.hash(data: Data(presented.utf8))) }

    /// The record to store for this key.
    public func record(appID: AppID?, role: APIKeyRole, label: String, at: Date) -> APIKey {
        APIKey(appID: appID, role: role, prefix: prefix, secretHash: hash, label: label, createdAt: at)
    }

    /// Whether `record` is this key's and still valid. Compares hashes in constant time.
    public func matches(_ record: APIKey) -> Bool {
        guard record.prefix == prefix, !record.isRevoked else { return false }
        let presentedHash = hash
        guard presentedHash.count == record.secretHash.count else { return false }
        var difference: UInt8 = 0
        for (lhs, rhs) in zip(presentedHash, record.secretHash) { difference |= lhs ^ rhs }
        return difference == 0
    }

    /// Finds and checks the key in the store; `nil` for an unknown, wrong or revoked key.
    public func authenticate(in store: some AppStore) async throws -> APIKey? {
        guard let record = try await store.apiKey(prefix: prefix), matches(record) else { return nil }
        return record
    }

    /// The same for a key as presented; `nil` also when it is not shaped like a key.
    public static func authenticate(_ presented: String, in store: some AppStore) async throws -> APIKey? {
        try await APIKeyCredential(presented: presented)?.authenticate(in: store)
    }
}

extension APIKeyCredential: CustomStringConvertible {
    /// Only the public prefix.
    public var description: String { "APIKeyCredential(\(prefix))" }
}
