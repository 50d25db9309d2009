import Crypto
import Foundation
import SwiftASN1
import X509

/// A throwaway certificate authority and the leaf it issues for the emulator's TLS listeners,
/// valid for `127.0.0.1`, `::1`, `localhost` and Apple's APNs host names, so that a client can keep
/// Apple's URLs unchanged and only be routed to the emulator (`curl --connect-to`). Clients trust
/// the CA (`curl --cacert`), never the leaf.
struct EmulatorCertificateAuthority: Sendable {
    let caCertificatePEM: String
    let leafCertificatePEM: String
    /// The leaf's PEM private key. It lives only in memory and is never logged.
    let leafPrivateKeyPEM: String

    /// Apple's host names for device push, broadcast and channel management, plus the aliases the
    /// reference lists (`api.development...`, `api-broadcast...`).
    static let appleHostNames = [
        "api.push.apple.com", "api.sandbox.push.apple.com", "api.development.push.apple.com",
        "api-broadcast.push.apple.com", "api-broadcast.sandbox.push.apple.com",
        "api-manage-broadcast.push.apple.com", "api-manage-broadcast.sandbox.push.apple.com",
    ]

    /// Generates a fresh CA (P-256) and a leaf signed by it, valid from an hour ago for a year.
    static func generate(now: Date = Date()) throws -> EmulatorCertificateAuthority {
        let caKey = P256.Signing.PrivateKey()
        let leafKey = P256.Signing.PrivateKey()
        let caPublicKey = Certificate.PublicKey(caKey.publicKey)
        let leafPublicKey = Certificate.PublicKey(leafKey.publicKey)
        let caName = try DistinguishedName {
            OrganizationName("Marquee")
            CommonName("Marquee APNs Emulator CA")
        }
        let leafName = try DistinguishedName {
            OrganizationName("Marquee")
            CommonName("localhost")
        }
        let notBefore = now.addingTimeInterval(-3600)
        let notAfter = now.addingTimeInterval(365 * 24 * 3600)
        let caKeyIdentifier = SubjectKeyIdentifier(hash: caPublicKey)

        let ca = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: caPublicKey,
            notValidBefore: notBefore,
            notValidAfter: notAfter,
            issuer: caName,
            subject: caName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                caKeyIdentifier
            },
            issuerPrivateKey: Certificate.PrivateKey(caKey)
        )
        let leaf = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: leafPublicKey,
            notValidBefore: notBefore,
            notValidAfter: notAfter,
            issuer: caName,
            subject: leafName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectKeyIdentifier(hash: leafPublicKey)
                AuthorityKeyIdentifier(keyIdentifier: caKeyIdentifier.keyIdentifier)
                SubjectAlternativeNames(
                    Self.appleHostNames.map { GeneralName.dnsName($0) } + [
                        .dnsName("localhost"),
                        .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1])),
                        .ipAddress(ASN1OctetString(contentBytes: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1])),
                    ]
                )
            },
            issuerPrivateKey: Certificate.PrivateKey(caKey)
        )
        return EmulatorCertificateAuthority(
            caCertificatePEM: try ca.serializeAsPEM().pemString,
            leafCertificatePEM: try leaf.serializeAsPEM().pemString,
            leafPrivateKeyPEM: leafKey.pemRepresentation
        )
    }
}
