import Crypto
import Foundation
import MarqueeCore
import MarqueeEmulator
import NIOCore
import Testing

extension EmulatorTests {
    @Suite("Provider tokens: the emulator authenticates as APNs does")
    struct ProviderTokenTests {
        /// A device push to a token the emulator issued, with the given authorization header.
        private func push(
            _ fixture: EmulatorFixture,
            _ client: TestHTTP2Client,
            authorization: String?,
            device: EmulatedDevice
        ) async throws -> TestResponse {
            var headers: [(String, String)] = [("apns-push-type", "alert"), ("apns-topic", EmulatorFixture.bundleID)]
            if let authorization { headers.append(("authorization", authorization)) }
            return try await client.send(
                path: "/3/device/\(device.deviceToken)",
                headers: headers,
                body: #"{"aps":{"alert":"hi"}}"#
            )
        }

        @Test("A token signed by a registered key is accepted in raw r||s and in DER form")
        func bothSignatureEncodings() async throws {
            try await EmulatorFixture.with { fixture in
                let device = try fixture.emulator.registerDevice(
                    environment: .sandbox,
                    bundleID: EmulatorFixture.bundleID
                )
                for encoding in [TestJWT.SignatureEncoding.raw, .der] {
                    let client = try await fixture.connect()
                    let response = try await push(
                        fixture,
                        client,
                        authorization: "bearer " + (try fixture.token(encoding: encoding)),
                        device: device
                    )
                    #expect(response.status == 200, "\(encoding)")
                    await client.close()
                }
            }
        }

        @Test("No authorization header answers 403 MissingProviderToken")
        func missingToken() async throws {
            try await EmulatorFixture.with { fixture in
                let device = try fixture.emulator.registerDevice(
                    environment: .sandbox,
                    bundleID: EmulatorFixture.bundleID
                )
                let client = try await fixture.connect()
                let response = try await push(fixture, client, authorization: nil, device: device)
                #expect(response.status == 403)
                #expect(response.reason == "MissingProviderToken")
                #expect(response.header("apns-id") != nil)
                await client.close()
            }
        }

        @Test("A bad signature, an unknown key or a malformed token answers 403 InvalidProviderToken")
        func invalidTokens() async throws {
            try await EmulatorFixture.with { fixture in
                let device = try fixture.emulator.registerDevice(
                    environment: .sandbox,
                    bundleID: EmulatorFixture.bundleID
                )
                let now = Int64(fixture.clock.now.timeIntervalSince1970)
                let stranger = P256.Signing.PrivateKey()
                let badSignature = try TestJWT.make(
                    privateKey: stranger,
                    teamID: fixture.key.teamID,
                    keyID: fixture.key.keyID,
                    issuedAt: now
                )
                let unknownKey = try TestJWT.make(
                    privateKey: fixture.key.privateKey,
                    teamID: fixture.key.teamID,
                    keyID: "NOSUCHKEY1",
                    issuedAt: now
                )
                let wrongTeam = try TestJWT.make(
                    privateKey: fixture.key.privateKey,
                    teamID: "OTHERTEAM1",
                    keyID: fixture.key.keyID,
                    issuedAt: now
                )
                for token in [badSignature, unknownKey, wrongTeam, "not.a.jwt", "abc"] {
                    let client = try await fixture.connect()
                    let response = try await push(fixture, client, authorization: "bearer " + token, device: device)
                    #expect(response.status == 403)
                    #expect(response.reason == "InvalidProviderToken")
                    await client.close()
                }
                #expect(fixture.emulator.rejectedRequests().filter { $0.reason == "InvalidProviderToken" }.count == 5)
            }
        }

        @Test(
            """
            A token issued more than an hour ago answers 403 ExpiredProviderToken, also on a connection that \
            accepted it
            """
        )
        func expiredToken() async throws {
            try await EmulatorFixture.with { fixture in
                let device = try fixture.emulator.registerDevice(
                    environment: .sandbox,
                    bundleID: EmulatorFixture.bundleID
                )
                let client = try await fixture.connect()
                let old = try fixture.token(issuedAt: fixture.clock.now.addingTimeInterval(-3601))
                let stale = try await push(fixture, client, authorization: "bearer " + old, device: device)
                #expect(stale.status == 403)
                #expect(stale.reason == "ExpiredProviderToken")

                let fresh = "bearer " + (try fixture.token())
                #expect(try await push(fixture, client, authorization: fresh, device: device).status == 200)
                fixture.clock.advance(by: 3601)
                let later = try await push(fixture, client, authorization: fresh, device: device)
                #expect(later.status == 403)
                #expect(later.reason == "ExpiredProviderToken")
                await client.close()
            }
        }

        @Test("A second token change within 20 minutes on one connection answers 429 TooManyProviderTokenUpdates")
        func tooManyTokenUpdates() async throws {
            try await EmulatorFixture.with { fixture in
                let device = try fixture.emulator.registerDevice(
                    environment: .sandbox,
                    bundleID: EmulatorFixture.bundleID
                )
                let client = try await fixture.connect()
                let first = "bearer " + (try fixture.token())
                #expect(try await push(fixture, client, authorization: first, device: device).status == 200)
                fixture.clock.advance(by: 60)
                let second = "bearer " + (try fixture.token())
                #expect(try await push(fixture, client, authorization: second, device: device).status == 200)
                fixture.clock.advance(by: 60)
                let third = "bearer " + (try fixture.token())
                let refused = try await push(fixture, client, authorization: third, device: device)
                #expect(refused.status == 429)
                #expect(refused.reason == "TooManyProviderTokenUpdates")
                // The connection keeps the token it had.
                #expect(try await push(fixture, client, authorization: second, device: device).status == 200)
                // Twenty minutes after the last change a new token is fine again.
                fixture.clock.advance(by: 20 * 60)
                #expect(
                    try await push(fixture, client, authorization: "bearer " + (try fixture.token()), device: device)
                        .status == 200
                )
                // Another connection counts its own changes.
                let other = try await fixture.connect()
                #expect(try await push(fixture, other, authorization: third, device: device).status == 200)
                await client.close()
                await other.close()
            }
        }

        @Test("A connection is bound to the team of its first token")
        func connectionBoundToTeam() async throws {
            try await EmulatorFixture.with { fixture in
                let device = try fixture.emulator.registerDevice(
                    environment: .sandbox,
                    bundleID: EmulatorFixture.bundleID
                )
                let otherKey = try fixture.emulator.makeDemoKey(
                    teamID: "TEAM000002",
                    keyID: "KEY0000002",
                    bundleID: "com.example.other"
                )
                let client = try await fixture.connect()
                #expect(
                    try await push(fixture, client, authorization: "bearer " + (try fixture.token()), device: device)
                        .status == 200
                )
                fixture.clock.advance(by: 30 * 60)
                let otherToken = try TestJWT.make(
                    privateKey: otherKey.privateKey,
                    teamID: otherKey.teamID,
                    keyID: otherKey.keyID,
                    issuedAt: Int64(fixture.clock.now.timeIntervalSince1970)
                )
                let response = try await push(fixture, client, authorization: "bearer " + otherToken, device: device)
                #expect(response.reason == "InvalidProviderToken")
                await client.close()
            }
        }

        @Test("Bound to its first key, a connection answers another key of the same team with UnrelatedKeyIdInToken")
        func connectionBoundToKey() async throws {
            try await EmulatorFixture.with({ $0.bindsConnectionToKey = true }) { fixture in
                let device = try fixture.emulator.registerDevice(
                    environment: .sandbox,
                    bundleID: EmulatorFixture.bundleID
                )
                let secondKey = P256.Signing.PrivateKey()
                fixture.emulator.registerKey(
                    teamID: fixture.key.teamID,
                    keyID: "KEY0000009",
                    publicKey: secondKey.publicKey
                )
                let client = try await fixture.connect()
                #expect(
                    try await push(fixture, client, authorization: "bearer " + (try fixture.token()), device: device)
                        .status == 200
                )
                fixture.clock.advance(by: 30 * 60)
                let secondToken = try TestJWT.make(
                    privateKey: secondKey,
                    teamID: fixture.key.teamID,
                    keyID: "KEY0000009",
                    issuedAt: Int64(fixture.clock.now.timeIntervalSince1970)
                )
                let response = try await push(fixture, client, authorization: "bearer " + secondToken, device: device)
                #expect(response.status == 403)
                #expect(response.reason == "UnrelatedKeyIdInToken")
                await client.close()

                // A new connection may use the second key.
                let fresh = try await fixture.connect()
                #expect(
                    try await push(fixture, fresh, authorization: "bearer " + secondToken, device: device).status == 200
                )
                await fresh.close()
            }
        }

        @Test("A key restricted to production answers BadEnvironmentKeyIdInToken in the sandbox")
        func environmentRestrictedKey() async throws {
            try await EmulatorFixture.with { fixture in
                let device = try fixture.emulator.registerDevice(
                    environment: .sandbox,
                    bundleID: EmulatorFixture.bundleID
                )
                let productionKey = P256.Signing.PrivateKey()
                fixture.emulator.registerKey(
                    teamID: fixture.key.teamID,
                    keyID: "PRODKEY001",
                    publicKey: productionKey.publicKey,
                    environments: [.production]
                )
                let token = try TestJWT.make(
                    privateKey: productionKey,
                    teamID: fixture.key.teamID,
                    keyID: "PRODKEY001",
                    issuedAt: Int64(fixture.clock.now.timeIntervalSince1970)
                )
                let client = try await fixture.connect()
                let response = try await push(fixture, client, authorization: "bearer " + token, device: device)
                #expect(response.status == 403)
                #expect(response.reason == "BadEnvironmentKeyIdInToken")
                await client.close()
            }
        }

        @Test("A connection allows one stream until a valid token, then the configured limit")
        func streamLimitRaisedAfterFirstValidToken() async throws {
            try await EmulatorFixture.with({ $0.maxConcurrentStreams = 750 }) { fixture in
                let device = try fixture.emulator.registerDevice(
                    environment: .sandbox,
                    bundleID: EmulatorFixture.bundleID
                )
                let client = try await fixture.connect()
                _ = try await push(fixture, client, authorization: nil, device: device)
                #expect(client.events.maxConcurrentStreams == [1])
                #expect(
                    try await push(fixture, client, authorization: "bearer " + (try fixture.token()), device: device)
                        .status == 200
                )
                // The SETTINGS frame travels with the response; give the client's loop a moment.
                try await client.channel.eventLoop.submit {}.get()
                #expect(client.events.maxConcurrentStreams == [1, 750])
                await client.close()
            }
        }
    }

}
