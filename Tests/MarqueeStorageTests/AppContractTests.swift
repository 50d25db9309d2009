import Foundation
import MarqueeCore
import MarqueeStorage
import Testing

@Suite("Apps, signing keys and API keys")
struct AppContractTests {
    @Test("an app is stored and read back; a second app with the same bundle ID is refused", arguments: Backend.allCases)
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
            let pem = "-----BEGIN PRIVATE KEY-----\nMIGTAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBHkwdwIBAQQg\n-----END PRIVATE KEY-----"
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
}
