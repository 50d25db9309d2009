import Foundation
import MarqueeCore
import MarqueeEngine
import MarqueeStorage
import Testing

@Suite("Sealed secrets and API-key credentials")
struct SecretTests {
    @Test("a sealed secret opens with its master key and context only")
    func sealing() throws {
        let old = try MasterKey(id: "2025", base64: MasterKey.generateBase64())
        let new = try MasterKey(id: "2026", base64: MasterKey.generateBase64())
        let sealed = try SecretSealer(current: old).seal(Array("p8 key".utf8), context: "row-1")
        #expect(SecretSealer.masterKeyID(of: sealed) == "2025")
        #expect(!String(decoding: sealed, as: UTF8.self).contains("p8 key"))

        // After a rotation the previous key still opens what it sealed.
        let rotated = SecretSealer(current: new, previous: [old])
        #expect(try rotated.unseal(sealed, context: "row-1") == Array("p8 key".utf8))
        #expect(throws: SecretError.unsealFailed) { try rotated.unseal(sealed, context: "row-2") }
        #expect(throws: SecretError.unknownMasterKey(id: "2025")) {
            try SecretSealer(current: new).unseal(sealed, context: "row-1")
        }
        var tampered = sealed
        tampered[tampered.count - 1] ^= 1
        #expect(throws: SecretError.unsealFailed) { try rotated.unseal(tampered, context: "row-1") }
    }

    @Test("a keyring from configuration seals with its first key and opens with any")
    func keyring() throws {
        let old = MasterKey.generateBase64()
        let new = MasterKey.generateBase64()
        let before = try SecretSealer(keyring: "2025:\(old)")
        let sealed = try before.seal(Array("secret".utf8), context: "c")
        let after = try SecretSealer(keyring: "2026:\(new), 2025:\(old)")
        #expect(after.current.id == "2026")
        #expect(try after.unseal(sealed, context: "c") == Array("secret".utf8))
        #expect(throws: SecretError.noMasterKeyConfigured) { try SecretSealer(keyring: "") }
        #expect(throws: SecretError.badMasterKey(id: "x")) { try SecretSealer(keyring: "x:bm90IGEga2V5") }
    }

    @Test("a master key must be 32 bytes of base64, and never prints them")
    func masterKeyValidation() throws {
        #expect(throws: SecretError.badMasterKey(id: "k")) { try MasterKey(id: "k", base64: "c2hvcnQ=") }
        let base64 = MasterKey.generateBase64()
        let key = try MasterKey(id: "k", base64: base64)
        #expect(!key.description.contains(base64))
    }

    @Test("a generated API key parses back to its prefix and matches only its own hash")
    func credentials() throws {
        let credential = APIKeyCredential.generate()
        let parsed = try #require(APIKeyCredential(presented: credential.presented))
        #expect(parsed.prefix == credential.prefix)
        let record = credential.record(appID: AppID(), role: .app, label: "ios", at: Date())
        #expect(parsed.matches(record))
        #expect(!APIKeyCredential.generate().matches(record))
        var revoked = record
        revoked.revokedAt = Date()
        #expect(!parsed.matches(revoked))
        #expect(!credential.description.contains(credential.presented))
        #expect(APIKeyCredential(presented: "mq__short") == nil)
    }
}
