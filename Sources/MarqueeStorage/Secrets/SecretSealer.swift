import Crypto
import Foundation

/// Seals secrets with AES-256-GCM under the current master key and unseals them with whichever
/// configured key sealed them. A sealed value is `0x01 | idLength | id | nonce | ciphertext | tag`;
/// the caller's context (the row it belongs to) is authenticated too, so a sealed value copied to
/// another row does not unseal.
public struct SecretSealer: Sendable {
    static let formatVersion: UInt8 = 1

    public let current: MasterKey
    private let keys: [String: MasterKey]

    /// `current` seals; `previous` keys still unseal what they sealed before a rotation.
    public init(current: MasterKey, previous: [MasterKey] = []) {
        self.current = current
        var keys = Dictionary(previous.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        keys[current.id] = current
        self.keys = keys
    }

    /// Reads a keyring from configuration: `id:base64` entries separated by commas, the current key
    /// first (`2026-05:q1w2...,2025-11:z9x8...`). Errors name key IDs, never key material.
    public init(keyring: String) throws(SecretError) {
        var keys: [MasterKey] = []
        for entry in keyring.split(separator: ",") {
            let trimmed = entry.trimmingCharacters(in: .whitespaces)
            guard let colon = trimmed.firstIndex(of: ":") else { throw SecretError.badMasterKeyID }
            keys.append(
                try MasterKey(id: String(trimmed[..<colon]), base64: String(trimmed[trimmed.index(after: colon)...]))
            )
        }
        guard let current = keys.first else { throw SecretError.noMasterKeyConfigured }
        self.init(current: current, previous: Array(keys.dropFirst()))
    }

    public func seal(_ plaintext: [UInt8], context: String) throws -> [UInt8] {
        let box = try AES.GCM.seal(plaintext, using: current.key, authenticating: Data(context.utf8))
        guard let combined = box.combined else { throw SecretError.unsealFailed }
        var sealed: [UInt8] = [Self.formatVersion, UInt8(current.id.utf8.count)]
        sealed.append(contentsOf: current.id.utf8)
        sealed.append(contentsOf: combined)
        return sealed
    }

    /// The ID of the master key that sealed `sealed`.
    public static func masterKeyID(of sealed: [UInt8]) -> String? {
        guard sealed.count > 2, sealed[0] == formatVersion else { return nil }
        let length = Int(sealed[1])
        guard sealed.count > 2 + length else { return nil }
        return String(decoding: sealed[2..<(2 + length)], as: UTF8.self)
    }

    public func unseal(_ sealed: [UInt8], context: String) throws -> [UInt8] {
        guard let keyID = Self.masterKeyID(of: sealed) else { throw SecretError.unsealFailed }
        guard let key = keys[keyID] else { throw SecretError.unknownMasterKey(id: keyID) }
        do {
            let box = try AES.GCM.SealedBox(combined: sealed[(2 + keyID.utf8.count)...])
            return Array(try AES.GCM.open(box, using: key.key, authenticating: Data(context.utf8)))
        } catch {
            throw SecretError.unsealFailed
        }
    }
}
