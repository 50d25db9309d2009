import Foundation

/// Tenants, their APNs signing keys and their API keys.
public protocol AppStore: Sendable {
    /// Inserts an app; `StoreError.duplicate` if its bundle ID is taken.
    func createApp(_ app: App) async throws
    func app(_ id: AppID) async throws -> App?
    func apps() async throws -> [App]
    /// Replaces the app's mutable fields (`name`, `environments`); `StoreError.notFound` if it has no row.
    func updateApp(_ app: App) async throws -> App

    /// Stores a signing key with its private key sealed under the store's master key, and makes it
    /// the app's current key.
    func storeSigningKey(_ key: SigningKey, privateKeyPEM: String) async throws
    func signingKeys(appID: AppID) async throws -> [SigningKey]
    /// The private key, unsealed; `nil` if the app has no such key.
    func signingKeyPEM(appID: AppID, id: SigningKeyID) async throws -> String?
    /// Re-seals under the current master key every signing key (of every app) that an older
    /// master key sealed, after a rotation; returns how many. Not scoped by app: it is maintenance.
    func resealSigningKeys() async throws -> Int

    /// Inserts an app's key, or a deployment key when `key.appID` is `nil`.
    func createAPIKey(_ key: APIKey) async throws
    /// The key with this public prefix, whatever its app: the one lookup authentication makes
    /// before it knows the app. The caller compares hashes and checks revocation.
    func apiKey(prefix: String) async throws -> APIKey?
    /// The app's keys; with `appID == nil`, the deployment keys.
    func apiKeys(appID: AppID?) async throws -> [APIKey]
    /// Returns false if the app (or, with `nil`, the deployment) has no such unrevoked key.
    func revokeAPIKey(appID: AppID?, id: APIKeyID, at: Date) async throws -> Bool
    /// Whether any key, app or deployment, revoked or not, was ever stored: a first start creates the
    /// first deployment key only when none was.
    func hasAnyAPIKey() async throws -> Bool
}
