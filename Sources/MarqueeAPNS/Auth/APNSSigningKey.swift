import Crypto
import Foundation

/// A token-authentication signing key: the `.p8` file (PKCS#8 PEM, EC P-256) with its Key ID and the
/// Team ID it belongs to. The private key never appears in `description`, logs or errors.
public struct APNSSigningKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The 10-character Key ID, sent as `kid`.
    public let keyID: String
    /// The 10-character Team ID, sent as `iss`.
    public let teamID: String
    let privateKey: P256.Signing.PrivateKey

    /// Loads a key from the PEM text of a `.p8` file.
    public init(pemRepresentation: String, keyID: String, teamID: String) throws(APNSSigningKeyError) {
        guard !keyID.isEmpty else { throw .missingKeyID }
        guard !teamID.isEmpty else { throw .missingTeamID }
        do {
            privateKey = try P256.Signing.PrivateKey(pemRepresentation: pemRepresentation)
        } catch {
            // The underlying error is dropped on purpose: it may quote parts of the key.
            throw .unreadableKey
        }
        self.keyID = keyID
        self.teamID = teamID
    }

    /// Loads a key from a `.p8` file.
    public init(contentsOfFile path: String, keyID: String, teamID: String) throws(APNSSigningKeyError) {
        let pem: String
        do {
            pem = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw .unreadableFile(path: path)
        }
        try self.init(pemRepresentation: pem, keyID: keyID, teamID: teamID)
    }

    /// Wraps a key already in memory (tests, or keys from a secret store).
    public init(privateKey: P256.Signing.PrivateKey, keyID: String, teamID: String) {
        self.privateKey = privateKey
        self.keyID = keyID
        self.teamID = teamID
    }

    /// The public half, for registering the key with an emulator.
    public var publicKey: P256.Signing.PublicKey { privateKey.publicKey }

    public var description: String { "APNSSigningKey(keyID: \(keyID), teamID: \(teamID))" }
    public var debugDescription: String { description }
}

/// Why a signing key could not be loaded. Never carries key material.
public enum APNSSigningKeyError: Error, Sendable, Hashable, CustomStringConvertible {
    case missingKeyID
    case missingTeamID
    /// The text is not a PEM-encoded PKCS#8 EC P-256 private key.
    case unreadableKey
    case unreadableFile(path: String)

    public var description: String {
        switch self {
        case .missingKeyID: "the signing key needs a Key ID"
        case .missingTeamID: "the signing key needs a Team ID"
        case .unreadableKey: "the signing key is not a PEM-encoded PKCS#8 P-256 private key"
        case .unreadableFile(let path): "cannot read the signing key file at \(path)"
        }
    }
}
