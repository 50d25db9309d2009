import Crypto
import Foundation
import MarqueeCore

/// A parsed (not yet verified) APNs provider token: an ES256 JWT with `kid` in its header and `iss`
/// (team ID) and `iat` in its claims.
struct ProviderToken: Sendable {
    let keyID: String
    let teamID: String
    let issuedAt: Int64
    /// `base64url(header) + "." + base64url(claims)`, the bytes the signature covers.
    let signingInput: Data
    /// The decoded signature: 64 raw `r||s` bytes (JWS) or a DER sequence (`openssl dgst -sign`).
    let signature: Data

    /// Parses the compact serialization; `nil` for anything malformed (APNs: `InvalidProviderToken`).
    init?(compact token: Substring) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
            let headerData = Base64URL.decode(parts[0]),
            let claimsData = Base64URL.decode(parts[1]),
            let signature = Base64URL.decode(parts[2]),
            case .object(let header)? = try? JSONParser.parse(Array(headerData)),
            case .object(let claims)? = try? JSONParser.parse(Array(claimsData)),
            case .string("ES256")? = header["alg"],
            case .string(let keyID)? = header["kid"],
            case .string(let teamID)? = claims["iss"]
        else { return nil }
        let issuedAt: Int64
        switch claims["iat"] {
        case .integer(let value)?: issuedAt = value
        case .number(let value)? where value.isFinite && value == value.rounded(): issuedAt = Int64(value)
        default: return nil
        }
        self.keyID = keyID
        self.teamID = teamID
        self.issuedAt = issuedAt
        self.signingInput = Data(token[..<parts[1].endIndex].utf8)
        self.signature = signature
    }

    /// Whether `publicKey` made the signature, in either of the two encodings APNs accepts.
    func isSigned(by publicKey: P256.Signing.PublicKey) -> Bool {
        let decoded: P256.Signing.ECDSASignature?
        if signature.count == 64 {
            decoded = try? P256.Signing.ECDSASignature(rawRepresentation: signature)
        } else {
            decoded = try? P256.Signing.ECDSASignature(derRepresentation: signature)
        }
        guard let decoded else { return false }
        return publicKey.isValidSignature(decoded, for: signingInput)
    }
}
