import Foundation
import MarqueeCore

/// One connection's provider-token state, confined to the connection's event loop.
///
/// A token string is verified once per connection and cached: later requests with the same string
/// only have their `iat` checked against the clock. Changes of token are counted per connection, as
/// APNs does, for `TooManyProviderTokenUpdates`.
struct ConnectionAuthenticator {
    /// Who a verified token speaks for.
    struct Identity: Sendable, Equatable {
        let teamID: String
        let keyID: String
    }

    private struct AcceptedToken {
        /// The whole `authorization` value it came in, for the per-request fast path.
        let header: String
        let compact: String
        let identity: Identity
        let issuedAt: Int64
    }

    private let environment: APNSEnvironment
    private var current: AcceptedToken?
    private var boundIdentity: Identity?
    private var lastChange: Date?
    /// Bundle IDs already found to belong to the connection's team. APNs binds a connection to its
    /// team's bundles; only positive answers are cached, so an app registered later still works.
    private var ownedBundleIDs: Set<String> = []

    init(environment: APNSEnvironment) {
        self.environment = environment
    }

    /// Authenticates the `authorization` header of one request.
    mutating func authenticate(
        authorization: String?,
        now: Date,
        configuration: APNSEmulatorConfiguration,
        keyLookup: (String) -> APNSEmulatorSigningKey?
    ) -> Checked<Identity> {
        guard let authorization, !authorization.isEmpty else { return .failure(.missingProviderToken) }
        let nowSeconds = Int64(now.timeIntervalSince1970.rounded(.down))
        // Fast path: the header this connection already verified, byte for byte.
        if let current, current.header == authorization {
            guard Double(nowSeconds - current.issuedAt) <= configuration.providerTokenMaximumAge else {
                return .failure(.expiredProviderToken)
            }
            return .success(current.identity)
        }
        // Apple writes `bearer` in lower case; other capitalisations are UNCONFIRMED and accepted.
        guard authorization.count > 7, authorization.prefix(7).lowercased() == "bearer " else {
            return .failure(.invalidProviderToken)
        }
        let compact = String(authorization.dropFirst(7).drop { $0 == " " })
        guard !compact.isEmpty else { return .failure(.missingProviderToken) }

        if let current, current.compact == compact {
            // The same token with other spacing or capitalisation of `bearer`.
            guard Double(nowSeconds - current.issuedAt) <= configuration.providerTokenMaximumAge else {
                return .failure(.expiredProviderToken)
            }
            return .success(current.identity)
        }

        guard let token = ProviderToken(compact: Substring(compact)),
            let key = keyLookup(token.keyID),
            key.teamID == token.teamID
        else { return .failure(.invalidProviderToken) }
        guard key.environments.contains(environment) else { return .failure(.badEnvironmentKeyIdInToken) }
        guard token.isSigned(by: key.publicKey) else { return .failure(.invalidProviderToken) }
        guard Double(token.issuedAt - nowSeconds) <= configuration.providerTokenFutureTolerance else {
            return .failure(.invalidProviderToken)
        }
        guard Double(nowSeconds - token.issuedAt) <= configuration.providerTokenMaximumAge else {
            return .failure(.expiredProviderToken)
        }
        let identity = Identity(teamID: token.teamID, keyID: token.keyID)
        if let boundIdentity {
            if configuration.bindsConnectionToTeam, boundIdentity.teamID != identity.teamID {
                return .failure(.invalidProviderToken)
            }
            if configuration.bindsConnectionToKey, boundIdentity.keyID != identity.keyID {
                return .failure(.unrelatedKeyIdInToken)
            }
        }
        if current != nil {
            // The first token on a connection is not a change; a change sooner than the minimum
            // interval after the previous change is the second change in that window.
            if let lastChange, now.timeIntervalSince(lastChange) < configuration.providerTokenMinimumUpdateInterval {
                return .failure(.tooManyProviderTokenUpdates)
            }
            lastChange = now
        }
        if current?.identity.teamID != identity.teamID { ownedBundleIDs.removeAll() }
        current = AcceptedToken(header: authorization, compact: compact, identity: identity, issuedAt: token.issuedAt)
        if boundIdentity == nil { boundIdentity = identity }
        return .success(identity)
    }

    /// Whether the connection's team owns `bundleID`, asking `lookup` only when not known yet.
    mutating func owns(_ bundleID: String, lookup: (String) -> Bool) -> Bool {
        if ownedBundleIDs.contains(bundleID) { return true }
        guard lookup(bundleID) else { return false }
        ownedBundleIDs.insert(bundleID)
        return true
    }
}
