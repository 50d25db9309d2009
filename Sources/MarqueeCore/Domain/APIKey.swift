import Foundation

/// What an API key may do. An app's keys act on that app only; a deployment key (no app) is always
/// `admin` and manages apps.
public enum APIKeyRole: String, Sendable, Hashable, Codable, CaseIterable {
    /// Manages the app: signing keys, API keys, everything below.
    case admin
    /// The producer's back office and schedulers: events, starts, broadcasts and ends.
    case publisher
    /// The iOS app or its backend: registers push-to-start and update tokens, reads channel IDs.
    case app

    /// Whether a key of this role may do what `required` allows: admin ⊇ publisher ⊇ app.
    public func allows(_ required: APIKeyRole) -> Bool {
        rank >= required.rank
    }

    private var rank: Int {
        switch self {
        case .admin: 2
        case .publisher: 1
        case .app: 0
        }
    }
}

/// A stored API key. The secret is never stored: only a hash of it, found through a public prefix
/// that is part of the key the client presents.
public struct APIKey: Sendable, Hashable {
    public var id: APIKeyID
    /// The app the key acts for; `nil` for a deployment key, which manages apps (always `admin`).
    public var appID: AppID?
    public var role: APIKeyRole
    /// The public, unique part of the key, used to find the row without scanning hashes.
    public var prefix: String
    /// SHA-256 of the whole presented key.
    public var secretHash: [UInt8]
    public var label: String
    public var createdAt: Date
    public var revokedAt: Date?

    public init(
        id: APIKeyID = APIKeyID(),
        appID: AppID?,
        role: APIKeyRole,
        prefix: String,
        secretHash: [UInt8],
        label: String,
        createdAt: Date,
        revokedAt: Date? = nil
    ) {
        self.id = id
        self.appID = appID
        self.role = role
        self.prefix = prefix
        self.secretHash = secretHash
        self.label = label
        self.createdAt = createdAt
        self.revokedAt = revokedAt
    }

    public var isRevoked: Bool { revokedAt != nil }

    /// Whether the key manages the deployment rather than one app.
    public var isDeploymentKey: Bool { appID == nil }
}

extension APIKey: CustomStringConvertible {
    /// Never prints the hash.
    public var description: String { "APIKey(\(prefix), \(role.rawValue)\(isRevoked ? ", revoked" : ""))" }
}
