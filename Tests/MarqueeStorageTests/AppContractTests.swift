import Foundation
import MarqueeCore
import MarqueeEngine
import MarqueeStorage
import Testing

@Suite("Apps, signing keys and API keys")
struct AppContractTests {
    @Test(
        "an app is stored and read back; a second app with the same bundle ID is refused",
        arguments: Backend.allCases
    )
    func apps(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            #expect(try await fixture.store.app(app.id) == app)
            var twin = app
            twin.id = AppID()
            await #expect(throws: StoreError.duplicate(entity: "app", key: app.bundleID)) {
                try await fixture.store.createApp(twin)
            }
            #expect(try await fixture.store.apps().map(\.id) == [app.id])
        }
    }

    @Test("a signing key is sealed at rest and unsealed only for its own app", arguments: Backend.allCases)
    func signingKeys(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            let other = try await fixture.makeApp("Other")
            let pem =
                """
                -----BEGIN PRIVATE KEY-----\nMIGTAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBHkwdwIBAQQg\n-----END PRIVATE \
                KEY-----
                """
            let key = SigningKey(appID: app.id, keyID: "ABC123DEFG", teamID: app.teamID, createdAt: fixture.now)
            try await fixture.store.storeSigningKey(key, privateKeyPEM: pem)

            #expect(try await fixture.store.signingKeyPEM(appID: app.id, id: key.id) == pem)
            #expect(try await fixture.store.signingKeyPEM(appID: other.id, id: key.id) == nil)
            #expect(try await fixture.store.signingKeys(appID: app.id) == [key])
            #expect(try await fixture.store.app(app.id)?.signingKeyID == key.id)
            #expect(!String(describing: key).contains("PRIVATE"))
        }
    }

    @Test("after a master-key rotation, re-sealing moves every signing key to the new key", arguments: Backend.allCases)
    func masterKeyRotation(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            let key = SigningKey(appID: app.id, keyID: "ROTATE1234", teamID: app.teamID, createdAt: fixture.now)
            try await fixture.store.storeSigningKey(key, privateKeyPEM: "pem-body")

            let newKey = try MasterKey(id: "test-2", base64: MasterKey.generateBase64())
            let rotating = try await fixture.reopen(SecretSealer(current: newKey, previous: [testSealer.current]))
            #expect(try await rotating.resealSigningKeys() == 1)
            #expect(try await rotating.resealSigningKeys() == 0)

            let newOnly = try await fixture.reopen(SecretSealer(current: newKey))
            #expect(try await newOnly.signingKeyPEM(appID: app.id, id: key.id) == "pem-body")
            await #expect(throws: SecretError.unknownMasterKey(id: "test-2")) {
                _ = try await fixture.store.signingKeyPEM(appID: app.id, id: key.id)
            }
        }
    }

    @Test("without a master key, storing a signing key fails and stores nothing", arguments: Backend.allCases)
    func signingKeysNeedAMasterKey(backend: Backend) async throws {
        try await withStore(backend, sealer: nil) { fixture in
            let app = try await fixture.makeApp()
            let key = SigningKey(appID: app.id, keyID: "ABC123DEFG", teamID: app.teamID, createdAt: fixture.now)
            await #expect(throws: SecretError.noMasterKeyConfigured) {
                try await fixture.store.storeSigningKey(key, privateKeyPEM: "secret")
            }
            #expect(try await fixture.store.signingKeys(appID: app.id).isEmpty)
        }
    }

    @Test("an API key authenticates by its secret until revoked; the secret is not stored", arguments: Backend.allCases)
    func apiKeys(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            let other = try await fixture.makeApp("Other")
            let credential = APIKeyCredential.generate()
            let record = credential.record(appID: app.id, role: .publisher, label: "back office", at: fixture.now)
            try await fixture.store.createAPIKey(record)
            #expect(record.secretHash != Array(credential.presented.utf8))

            #expect(try await APIKeyCredential.authenticate(credential.presented, in: fixture.store) == record)
            let forged = "mq_\(credential.prefix)_\(String(repeating: "A", count: 43))"
            #expect(try await APIKeyCredential.authenticate(forged, in: fixture.store) == nil)
            #expect(try await APIKeyCredential.authenticate("not a key", in: fixture.store) == nil)

            #expect(try await fixture.store.apiKeys(appID: other.id).isEmpty)
            #expect(try await !fixture.store.revokeAPIKey(appID: other.id, id: record.id, at: fixture.now))
            #expect(try await fixture.store.revokeAPIKey(appID: app.id, id: record.id, at: fixture.now))
            #expect(try await APIKeyCredential.authenticate(credential.presented, in: fixture.store) == nil)
        }
    }

    @Test(
        "an app's name and environments change; its bundle ID, team and signing key stay",
        arguments: Backend.allCases
    )
    func updateApp(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            let key = SigningKey(appID: app.id, keyID: "KEEP123456", teamID: app.teamID, createdAt: fixture.now)
            try await fixture.store.storeSigningKey(key, privateKeyPEM: "pem-body")
            var change = app
            change.name = "Scores Pro"
            change.environments = [.production]
            change.bundleID = "com.example.elsewhere"
            change.teamID = "OTHERTEAM1"

            let updated = try await fixture.store.updateApp(change)
            #expect(updated.name == "Scores Pro")
            #expect(updated.environments == [.production])
            #expect(updated.bundleID == app.bundleID)
            #expect(updated.teamID == app.teamID)
            #expect(updated.signingKeyID == key.id)
            #expect(try await fixture.store.app(app.id) == updated)

            var missing = change
            missing.id = AppID()
            await #expect(throws: StoreError.notFound(entity: "app", id: missing.id.description)) {
                _ = try await fixture.store.updateApp(missing)
            }
        }
    }

    @Test(
        "a deployment key is stored without an app, listed and revoked only as one; app calls never see it",
        arguments: Backend.allCases
    )
    func deploymentKeys(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            #expect(try await !fixture.store.hasAnyAPIKey())
            let app = try await fixture.makeApp()
            let credential = APIKeyCredential.generate()
            let deployment = credential.record(appID: nil, role: .admin, label: "first start", at: fixture.now)
            try await fixture.store.createAPIKey(deployment)
            #expect(deployment.isDeploymentKey)
            #expect(try await fixture.store.hasAnyAPIKey())

            let appKey = APIKeyCredential.generate().record(appID: app.id, role: .admin, label: "ops", at: fixture.now)
            try await fixture.store.createAPIKey(appKey)
            #expect(try await fixture.store.apiKeys(appID: nil) == [deployment])
            #expect(try await fixture.store.apiKeys(appID: app.id) == [appKey])
            #expect(try await APIKeyCredential.authenticate(credential.presented, in: fixture.store) == deployment)

            // Each scope revokes only its own keys.
            #expect(try await !fixture.store.revokeAPIKey(appID: app.id, id: deployment.id, at: fixture.now))
            #expect(try await !fixture.store.revokeAPIKey(appID: nil, id: appKey.id, at: fixture.now))
            #expect(try await fixture.store.revokeAPIKey(appID: nil, id: deployment.id, at: fixture.now))
            #expect(try await !fixture.store.revokeAPIKey(appID: nil, id: deployment.id, at: fixture.now))
            #expect(try await APIKeyCredential.authenticate(credential.presented, in: fixture.store) == nil)
            #expect(try await fixture.store.apiKeys(appID: nil).map(\.revokedAt) == [fixture.now])
            #expect(try await fixture.store.apiKeys(appID: app.id) == [appKey])
            // A revoked key still counts: the first start must not mint a new deployment key.
            #expect(try await fixture.store.hasAnyAPIKey())
        }
    }

    @Test("a deployment key must be admin, and an app key needs its app", arguments: Backend.allCases)
    func deploymentKeysAreAdmin(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            for role in [APIKeyRole.publisher, .app] {
                let key = APIKeyCredential.generate().record(
                    appID: nil,
                    role: role,
                    label: "not allowed",
                    at: fixture.now
                )
                await #expect(throws: (any Error).self) { try await fixture.store.createAPIKey(key) }
            }
            let missingApp = AppID()
            let orphan = APIKeyCredential.generate().record(
                appID: missingApp,
                role: .app,
                label: "no app",
                at: fixture.now
            )
            await #expect(throws: StoreError.notFound(entity: "app", id: missingApp.description)) {
                try await fixture.store.createAPIKey(orphan)
            }
            let anyKey = try await fixture.store.hasAnyAPIKey()
            #expect(!anyKey)
        }
    }

    @Test("every role is stored and read back as itself", arguments: Backend.allCases)
    func roles(backend: Backend) async throws {
        try await withStore(backend) { fixture in
            let app = try await fixture.makeApp()
            for role in APIKeyRole.allCases {
                let credential = APIKeyCredential.generate()
                try await fixture.store.createAPIKey(
                    credential.record(appID: app.id, role: role, label: role.rawValue, at: fixture.now)
                )
                #expect(try await fixture.store.apiKey(prefix: credential.prefix)?.role == role)
            }
            #expect(Set(try await fixture.store.apiKeys(appID: app.id).map(\.role)) == Set(APIKeyRole.allCases))
        }
    }
}
