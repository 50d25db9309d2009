import MarqueeEngine

/// The API key a connection's client last presented, with its hash (`APIKeyCredential.hash`): a
/// device's app sends the same key request after request on one connection, and hashing it for
/// each cost more than looking it up. Only the hash of the very same bytes is reused; whether the
/// key is still good is asked of the replica's `CredentialCache` on every request. It lives as
/// long as its connection (`EventLoopAnswerHandler`).
struct LastPresentedKey {
    private var presented: String?
    private var keyHash: [UInt8] = []

    /// The hash of the key `credential` presents; nil when it is not shaped like a key.
    mutating func hash(of credential: Substring) -> [UInt8]? {
        if let presented, presented.utf8.elementsEqual(credential.utf8) { return keyHash }
        guard let key = APIKeyCredential(presented: String(credential)) else { return nil }
        presented = key.presented
        keyHash = key.hash
        return keyHash
    }
}
