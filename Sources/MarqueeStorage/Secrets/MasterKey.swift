import Crypto
import Foundation

/// A 256-bit key that seals secrets at rest (APNs signing keys), named so that it can be rotated:
/// every sealed value records the ID of the key that sealed it.
public struct MasterKey: Sendable {
    public let id: String
    let key: SymmetricKey

    /// `base64` must decode to 32 bytes.
    public init(id: String, base64: String) throws(SecretError) {
        guard !id.isEmpty, id.utf8.count <= 255 else { throw SecretError.badMasterKeyID }
        guard let bytes = Data(base64Encoded: base64), bytes.count == 32 else { throw SecretError.badMasterKey(id: id) }
        self.id = id
        self.key = SymmetricKey(data: bytes)
    }

    /// A fresh random key, as base64, for `marquee` configuration and tests.
    public static func generateBase64() -> String {
        SymmetricKey(size: .bits256).withUnsafeBytes { Data($0).base64EncodedString() }
    }
}

extension MasterKey: CustomStringConvertible {
    /// Names the key, never its bytes.
    public var description: String { "MasterKey(\(id))" }
}

/// Sealing and unsealing failures. None carries key material or plaintext.
public enum SecretError: Error, Sendable, Hashable, CustomStringConvertible {
    case badMasterKeyID
    case badMasterKey(id: String)
    /// The sealed value names a master key the keyring does not hold.
    case unknownMasterKey(id: String)
    /// The sealed value is damaged, or was sealed for another row.
    case unsealFailed
    case noMasterKeyConfigured

    public var description: String {
        switch self {
        case .badMasterKeyID: "a master key ID must be 1 to 255 bytes"
        case .badMasterKey(let id): "master key \(id) is not 32 bytes of base64"
        case .unknownMasterKey(let id): "no master key \(id) is configured to unseal this secret"
        case .unsealFailed: "a sealed secret failed authentication"
        case .noMasterKeyConfigured: "no master key is configured for sealing secrets"
        }
    }
}
