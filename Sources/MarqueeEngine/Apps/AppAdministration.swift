import Foundation
import Logging
import MarqueeAPNS
import MarqueeCore

/// Tenants and their credentials: apps, the APNs signing key of each, and API keys.
public struct AppAdministration: Sendable {
    let store: any MarqueeStore
    let provisioner: any APNSAccountProvisioner
    let clock: any WallClock
    let logger: Logger
    /// What authenticating keys found lately; this replica's changes to keys and apps reach it at
    /// once, another's through the server's listener (`forgetAll`).
    public let credentials: CredentialCache

    public init(
        store: any MarqueeStore,
        provisioner: any APNSAccountProvisioner,
        credentialLifetime: Duration = .zero,
        clock: any WallClock,
        logger: Logger
    ) {
        self.store = store
        self.provisioner = provisioner
        self.clock = clock
        self.logger = logger
        credentials = CredentialCache(lifetime: credentialLifetime, clock: clock)
    }

    // MARK: Apps

    /// What a caller gives to create an app.
    public struct AppDraft: Sendable {
        public var name: String
        public var bundleID: String
        public var teamID: String
        public var environments: [APNSEnvironment]

        public init(name: String, bundleID: String, teamID: String, environments: [APNSEnvironment]) {
            self.name = name
            self.bundleID = bundleID
            self.teamID = teamID
            self.environments = environments
        }
    }

    public func createApp(_ draft: AppDraft) async throws -> App {
        var validation = InputValidation()
        validation.text(draft.name, "/name", maximum: 200)
        validation.require(Self.isBundleID(draft.bundleID), "/bundleID", "must be a bundle ID such as com.example.app")
        validation.require(
            Self.isAppleIdentifier(draft.teamID),
            "/teamID",
            "must be Apple's 10-character team ID (A–Z, 0–9)"
        )
        validation.require(!draft.environments.isEmpty, "/environments", "must name at least one environment")
        try validation.check()

        let app = App(
            name: draft.name,
            bundleID: draft.bundleID,
            teamID: draft.teamID,
            environments: Set(draft.environments),
            createdAt: clock.now
        )
        do {
            try await store.createApp(app)
        } catch StoreError.duplicate {
            throw EngineError.duplicate("an app with bundle ID \(draft.bundleID) exists already")
        }
        try await provisioner.provision(app: app)
        logger.debug("app created", metadata: ["app.id": "\(app.id)"])
        return app
    }

    public func app(_ id: AppID) async throws -> App {
        guard let app = try await store.app(id) else { throw EngineError.notFound(resource: "app", id: "\(id)") }
        return app
    }

    public func apps() async throws -> [App] {
        try await store.apps()
    }

    public func updateApp(_ id: AppID, name: String?, environments: [APNSEnvironment]?) async throws -> App {
        var validation = InputValidation()
        if let name { validation.text(name, "/name", maximum: 200) }
        if let environments {
            validation.require(!environments.isEmpty, "/environments", "must name at least one environment")
        }
        try validation.check()
        var app = try await app(id)
        if let name { app.name = name }
        if let environments { app.environments = Set(environments) }
        do {
            defer { credentials.forget(appID: id) }
            return try await store.updateApp(app)
        } catch StoreError.notFound {
            throw EngineError.notFound(resource: "app", id: "\(id)")
        }
    }

    // MARK: Signing keys

    /// What a caller gives to install a signing key.
    public struct SigningKeyUpload: Sendable {
        public var keyID: String
        public var teamID: String?
        public var privateKeyPEM: String
        public var environments: [APNSEnvironment]

        public init(keyID: String, teamID: String?, privateKeyPEM: String, environments: [APNSEnvironment]) {
            self.keyID = keyID
            self.teamID = teamID
            self.privateKeyPEM = privateKeyPEM
            self.environments = environments
        }
    }

    /// Installs the app's signing key and makes it current. Installing the current key again
    /// changes nothing; a new key replaces it (the APNs clients follow on their next use).
    public func installSigningKey(appID: AppID, _ upload: SigningKeyUpload) async throws -> SigningKey {
        let app = try await app(appID)
        let teamID = upload.teamID ?? app.teamID
        var validation = InputValidation()
        validation.require(
            Self.isAppleIdentifier(upload.keyID),
            "/keyID",
            "must be Apple's 10-character key ID (A–Z, 0–9)"
        )
        validation.require(Self.isAppleIdentifier(teamID), "/teamID", "must be Apple's 10-character team ID (A–Z, 0–9)")
        if (try? APNSSigningKey(pemRepresentation: upload.privateKeyPEM, keyID: "K", teamID: "T")) == nil {
            validation.add(FieldError("/privateKey", "must be the PEM text of a .p8 file (PKCS#8, EC P-256)"))
        }
        try validation.check()

        let existing = try await store.signingKeys(appID: appID)
        if let current = existing.first(where: { $0.keyID == upload.keyID }) {
            guard current.id == app.signingKeyID else {
                throw EngineError.conflict(
                    "key \(upload.keyID) was replaced by a newer key; install a new key instead of going back"
                )
            }
            return current
        }
        let key = SigningKey(
            appID: appID,
            keyID: upload.keyID,
            teamID: teamID,
            environments: Set(upload.environments),
            createdAt: Self.creationTime(ofKeyAfter: existing, now: clock.now)
        )
        try await store.storeSigningKey(key, privateKeyPEM: upload.privateKeyPEM)
        credentials.forget(appID: appID)
        try await provisioner.provision(signingKey: key, privateKeyPEM: upload.privateKeyPEM, of: app)
        logger.debug("signing key installed", metadata: ["app.id": "\(appID)", "apns.key_id": "\(key.keyID)"])
        return key
    }

    /// A new key's creation time: now, or just after the newest stored key if that is not
    /// earlier. The current key is the newest by creation time; a key installed in the same
    /// instant as the last (a held clock) or on a replica whose clock is behind the one that
    /// installed it would otherwise tie with it or lose to it, and the app would keep the old key.
    static func creationTime(ofKeyAfter existing: [SigningKey], now: Date) -> Date {
        guard let newest = existing.map(\.createdAt).max(), newest >= now else { return now }
        return newest.addingTimeInterval(0.001)
    }

    /// The app's current signing key, if it has one.
    public func currentSigningKey(of app: App) async throws -> SigningKey? {
        guard let id = app.signingKeyID else { return nil }
        return try await store.signingKeys(appID: app.id).first { $0.id == id }
    }

    // MARK: API keys

    /// Creates a key for the app (or, with `nil`, a deployment key); the presented key is returned
    /// once and never stored.
    public func createAPIKey(appID: AppID?, role: APIKeyRole, label: String) async throws -> (APIKey, presented: String)
    {
        var validation = InputValidation()
        validation.text(label, "/label", maximum: 200, allowEmpty: true)
        validation.require(appID != nil || role == .admin, "/role", "a deployment key is always admin")
        try validation.check()
        if let appID { _ = try await app(appID) }
        let credential = APIKeyCredential.generate()
        let record = credential.record(appID: appID, role: role, label: label, at: clock.now)
        try await store.createAPIKey(record)
        return (record, credential.presented)
    }

    public func apiKeys(appID: AppID?) async throws -> [APIKey] {
        if let appID { _ = try await app(appID) }
        return try await store.apiKeys(appID: appID)
    }

    public func revokeAPIKey(appID: AppID?, id: APIKeyID) async throws {
        defer { credentials.forget(keyID: id) }
        guard try await store.revokeAPIKey(appID: appID, id: id, at: clock.now) else {
            throw EngineError.notFound(resource: "API key", id: "\(id)")
        }
    }

    /// Asks the store a cheap question, so that readiness fails when the store does not answer.
    public func checkStoreAnswers() async throws {
        _ = try await store.hasAnyAPIKey()
    }

    /// On a store that never had a key, creates the first deployment key and returns it (to be
    /// shown once); `nil` otherwise.
    public func bootstrapDeploymentKey() async throws -> String? {
        guard try await !store.hasAnyAPIKey() else { return nil }
        return try await createAPIKey(appID: nil, role: .admin, label: "created on first start").presented
    }

    /// What `authenticate` answers without a read for the key whose hash is `keyHash`
    /// (`APIKeyCredential.hash`), when this replica remembers it (`CredentialCache`, which forgets
    /// a revoked key on every replica): nil when it does not, and then `authenticate` decides.
    public func rememberedCaller(keyHash: [UInt8]) -> AuthenticatedCaller? {
        credentials.caller(forKeyHash: keyHash)
    }

    /// The stored key a presented key stands for, with its app; `nil` for an unknown, malformed or
    /// revoked key. A key that authenticated within `auth.cacheSeconds` is answered from memory.
    public func authenticate(_ presented: String) async throws -> AuthenticatedCaller? {
        guard let credential = APIKeyCredential(presented: presented) else { return nil }
        let hash = credential.hash
        if let caller = credentials.caller(forKeyHash: hash) { return caller }
        let generation = credentials.generation
        guard let key = try await credential.authenticate(in: store) else { return nil }
        var caller = AuthenticatedCaller(key: key, app: nil)
        if let appID = key.appID { caller.app = try await store.app(appID) }
        credentials.remember(caller, forKeyHash: hash, readAt: generation)
        return caller
    }

    // MARK: Rules

    /// Apple's team and key IDs: 10 characters, upper-case letters and digits.
    static func isAppleIdentifier(_ value: String) -> Bool {
        value.utf8.count == 10
            && value.utf8.allSatisfy {
                (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
            }
    }

    /// A reverse-DNS bundle ID: at least two dot-separated parts of letters, digits and hyphens.
    static func isBundleID(_ value: String) -> Bool {
        let parts = value.split(separator: ".", omittingEmptySubsequences: false)
        guard value.utf8.count <= 155, parts.count >= 2 else { return false }
        return parts.allSatisfy { part in
            !part.isEmpty
                && part.utf8.allSatisfy {
                    ($0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z"))
                        || ($0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z"))
                        || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) || $0 == UInt8(ascii: "-")
                }
        }
    }
}
