import Foundation
import MarqueeEngine

/// What an idempotent request's answer keeps for its replay: all of it but a secret.
///
/// API keys are shown once and stored hashed; an answer that holds one (a key creation's `key`) is
/// stored without it, so that its replay says the key exists, by its ID (`apiKey.id`), and never
/// shows the secret again: a client that lost the first answer revokes that key and makes another.
/// Sealing the answer with the master keyring instead would keep a recoverable copy of every new
/// key for a day, in the database and its backups, for the one benefit of showing it twice.
enum ReplayableAnswer {
    /// The body to store: `body` itself when it holds no API key, else the same JSON without every
    /// member (or array element) whose value is one. `nil` when the body holds a key and is not JSON
    /// that can be taken apart: nothing is stored then.
    static func storable(_ body: [UInt8]) -> [UInt8]? {
        guard mayHoldKey(body) else { return body }
        guard let value = try? JSONSerialization.jsonObject(with: Data(body), options: [.fragmentsAllowed]) else {
            return nil
        }
        let redacted = withoutKeys(value)
        guard
            let data = try? JSONSerialization.data(withJSONObject: redacted, options: [.sortedKeys, .fragmentsAllowed])
        else { return nil }
        let bytes = Array(data)
        return mayHoldKey(bytes) && containsKey(redacted) ? nil : bytes
    }

    /// Whether the bytes hold the start of an API key (`mq_`): a cheap test before any parsing.
    static func mayHoldKey(_ body: [UInt8]) -> Bool {
        let marker = Array("mq_".utf8)
        guard body.count >= marker.count else { return false }
        for start in 0...(body.count - marker.count) where body[start] == marker[0] {
            if body[start + 1] == marker[1], body[start + 2] == marker[2] { return true }
        }
        return false
    }

    static func isKey(_ value: Any) -> Bool {
        guard let text = value as? String else { return false }
        return APIKeyCredential(presented: text) != nil
    }

    private static func withoutKeys(_ value: Any) -> Any {
        if let object = value as? [String: Any] {
            return object.filter { !isKey($0.value) }.mapValues(withoutKeys)
        }
        if let array = value as? [Any] {
            return array.filter { !isKey($0) }.map(withoutKeys)
        }
        return value
    }

    private static func containsKey(_ value: Any) -> Bool {
        if isKey(value) { return true }
        if let object = value as? [String: Any] { return object.values.contains(where: containsKey) }
        if let array = value as? [Any] { return array.contains(where: containsKey) }
        return false
    }
}
