import Crypto
import Foundation
import MarqueeCore

/// A signed ES256 provider token (JWT). Its text is a secret: `description` shows only its age data.
public struct APNSProviderToken: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// `iat`, whole seconds.
    public let issuedAt: Date
    /// Counts the tokens a cache has issued; connections compare generations to notice a renewal.
    public let generation: Int
    /// `bearer <jwt>`, ready for the `authorization` header.
    let authorizationValue: String

    /// The JWT itself.
    var jwt: String { String(authorizationValue.dropFirst(Self.bearerPrefix.count)) }

    static let bearerPrefix = "bearer "

    /// Signs `{"alg":"ES256","kid":…}.{"iss":…,"iat":…}` with the key. Nothing else goes in the
    /// token: APNs has rejected tokens with extra fields.
    init(signingKey: APNSSigningKey, issuedAt: Date, generation: Int) throws {
        let seconds = Int64(issuedAt.timeIntervalSince1970.rounded(.down))
        var header: [UInt8] = []
        header.append(contentsOf: #"{"alg":"ES256","kid":"#.utf8)
        JSONValue.writeString(signingKey.keyID, into: &header)
        header.append(UInt8(ascii: "}"))
        var claims: [UInt8] = []
        claims.append(contentsOf: #"{"iss":"#.utf8)
        JSONValue.writeString(signingKey.teamID, into: &claims)
        claims.append(contentsOf: #","iat":\#(seconds)}"#.utf8)
        let signingInput = Base64URL.encode(header) + "." + Base64URL.encode(claims)
        let signature = try signingKey.privateKey.signature(for: Data(signingInput.utf8))
        // JWS uses the raw 64-byte r||s form; APNs accepts it as well as DER.
        self.authorizationValue = Self.bearerPrefix + signingInput + "." + Base64URL.encode(signature.rawRepresentation)
        self.issuedAt = Date(timeIntervalSince1970: TimeInterval(seconds))
        self.generation = generation
    }

    /// How old the token is at `now`.
    func age(at now: Date) -> TimeInterval { now.timeIntervalSince(issuedAt) }

    public var description: String { "APNSProviderToken(generation: \(generation), issuedAt: \(issuedAt))" }
    public var debugDescription: String { description }
}
