import Foundation
import MarqueeCore

/// Signing keys sealed for their row under the configured master keys, the same on both backends.
extension StoreConfiguration {
    /// A signing key's PEM sealed for its row, and the master key that sealed it.
    func sealSigningKey(_ key: SigningKey, privateKeyPEM: String) throws -> (sealed: [UInt8], masterKeyID: String) {
        let sealer = try requireSealer()
        let sealed = try sealer.seal(
            Array(privateKeyPEM.utf8),
            context: Self.sealContext(appID: key.appID, signingKeyID: key.id)
        )
        return (sealed, sealer.current.id)
    }

    /// A signing key sealed by an older master key, sealed again under the current one.
    func resealSigningKey(
        _ sealed: [UInt8],
        appID: AppID,
        id: SigningKeyID
    ) throws -> (sealed: [UInt8], masterKeyID: String) {
        let sealer = try requireSealer()
        let context = Self.sealContext(appID: appID, signingKeyID: id)
        return (try sealer.seal(try sealer.unseal(sealed, context: context), context: context), sealer.current.id)
    }

    func unsealSigningKey(_ sealed: [UInt8], appID: AppID, id: SigningKeyID) throws -> String {
        let plaintext = try requireSealer().unseal(sealed, context: Self.sealContext(appID: appID, signingKeyID: id))
        return String(decoding: plaintext, as: UTF8.self)
    }
}
