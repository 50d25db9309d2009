import Foundation
import MarqueeCore
import MarqueeEmulator
import Testing

extension EmulatorTests {
    @Suite("Broadcasts: POST /4/broadcasts/apps/<bundleID> on a channel")
    struct BroadcastTests {
        private static let update =
            #"{"aps":{"timestamp":1767225600,"event":"update","content-state":{"score":"1-0"}}}"#

        private func send(
            _ fixture: EmulatorFixture,
            method: String = "POST",
            bundleID: String = EmulatorFixture.bundleID,
            channelID: String?,
            replacing overrides: [(String, String?)] = [],
            body: String = Self.update
        ) async throws -> TestResponse {
            var headers: [(String, String)] = [
                try fixture.bearer(), ("apns-push-type", "liveactivity"), ("apns-expiration", "0"),
                ("apns-priority", "10"),
            ]
            if let channelID { headers.append(("apns-channel-id", channelID)) }
            for (name, value) in overrides {
                headers.removeAll { $0.0 == name }
                if let value { headers.append((name, value)) }
            }
            let client = try await fixture.connect()
            defer { Task { await client.close() } }
            return try await client.send(
                method: method,
                path: "/4/broadcasts/apps/\(bundleID)",
                headers: headers,
                body: body
            )
        }

        @Test("A broadcast answers 200 with apns-request-id and apns-unique-id, and is recorded for the channel")
        func success() async throws {
            try await EmulatorFixture.with { fixture in
                let channelID = try await fixture.createChannel(policy: 0)
                let requestID = "6a3c5b1e-8f0d-4c59-9d0a-1b2c3d4e5f60"
                let response = try await send(
                    fixture,
                    channelID: channelID,
                    replacing: [("apns-request-id", requestID)]
                )
                #expect(response.status == 200)
                #expect(response.header("apns-request-id") == requestID)
                #expect(response.header("apns-unique-id") != nil)
                #expect(response.header("apns-id") == nil)
                let recorded = try #require(fixture.emulator.pushes(to: channelID, in: .sandbox).first)
                #expect(recorded.endpoint == .broadcast)
                #expect(recorded.payload == Self.update)
                #expect(recorded.expiration == 0)
            }
        }

        @Test("A channel over its hourly publishing budget answers 429 TooManyRequests; each policy has its own budget")
        func publishingBudget() async throws {
            try await EmulatorFixture.with({
                $0.broadcastBudgetPerHour = [.noMessageStored: 3, .mostRecentMessageStored: 1]
            }) { fixture in
                let frequent = try await fixture.createChannel(policy: 0)
                let other = try await fixture.createChannel(policy: 0)
                let stored = try await fixture.createChannel(policy: 1)
                for _ in 0..<3 { #expect(try await send(fixture, channelID: frequent).status == 200) }
                let refused = try await send(fixture, channelID: frequent)
                #expect(refused.status == 429)
                #expect(refused.reason == "TooManyRequests")
                // The budget is per channel.
                #expect(try await send(fixture, channelID: other).status == 200)
                #expect(try await send(fixture, channelID: stored).status == 200)
                #expect(try await send(fixture, channelID: stored).reason == "TooManyRequests")
                // Refused broadcasts are not delivered or recorded; an hour later the budget is back.
                #expect(fixture.emulator.pushes(to: frequent, in: .sandbox).count == 3)
                fixture.clock.advance(by: 3600)
                #expect(try await send(fixture, channelID: frequent).status == 200)
            }
        }

        @Test(
            "`Liveactivity`, spelled as in Apple's tables, is accepted in both profiles",
            arguments: APNSEmulatorProfile.allCases
        )
        func pushTypeSpelling(profile: APNSEmulatorProfile) async throws {
            try await EmulatorFixture.with(profile: profile) { fixture in
                let channelID = try await fixture.createChannel(policy: 1)
                let response = try await send(
                    fixture,
                    channelID: channelID,
                    replacing: [("apns-push-type", "Liveactivity")]
                )
                #expect(response.status == 200)
            }
        }

        @Test(
            """
            No apns-expiration answers BadExpirationDate as observed; the documented profile accepts it, as \
            Apple's curl examples do
            """,
            arguments: [(APNSEmulatorProfile.observed, 400, "BadExpirationDate"), (.documented, 200, nil)]
                as [(APNSEmulatorProfile, Int, String?)]
        )
        func missingExpiration(profile: APNSEmulatorProfile, status: Int, reason: String?) async throws {
            try await EmulatorFixture.with(profile: profile) { fixture in
                let channelID = try await fixture.createChannel(policy: 1)
                let response = try await send(fixture, channelID: channelID, replacing: [("apns-expiration", nil)])
                #expect(response.status == status)
                #expect(response.reason == reason)
            }
        }

        @Test(
            """
            A well-formed channel ID that never existed answers BadChannelId as observed, ChannelNotRegistered as \
            documented; a deleted one ChannelNotRegistered in both
            """,
            arguments: [(APNSEmulatorProfile.observed, "BadChannelId"), (.documented, "ChannelNotRegistered")]
        )
        func neverCreatedChannel(profile: APNSEmulatorProfile, reason: String) async throws {
            try await EmulatorFixture.with(profile: profile) { fixture in
                // 16 bytes of standard base64, the shape of a real ID, that nobody issued.
                let neverCreated = "q83vEjRWeJCrze8SNFZ4kA=="
                let response = try await send(fixture, channelID: neverCreated)
                #expect(response.status == 400)
                #expect(response.reason == reason)

                let deleted = try await fixture.createChannel(policy: 0)
                let client = try await fixture.connect(.channelManagement)
                _ = try await client.send(
                    method: "DELETE",
                    path: "/1/apps/\(EmulatorFixture.bundleID)/channels",
                    headers: [try fixture.bearer(), ("apns-channel-id", deleted)]
                )
                await client.close()
                #expect(try await send(fixture, channelID: deleted).reason == "ChannelNotRegistered")
            }
        }

        @Test("Each profile's answers can be set one by one: a documented emulator that requires apns-expiration")
        func profileSettingsAreIndependent() async throws {
            try await EmulatorFixture.with(profile: .documented, { $0.broadcastRequiresExpiration = true }) { fixture in
                #expect(fixture.emulator.configuration.profile == .documented)
                let channelID = try await fixture.createChannel(policy: 1)
                #expect(
                    try await send(fixture, channelID: channelID, replacing: [("apns-expiration", nil)]).reason
                        == "BadExpirationDate"
                )
                #expect(try await send(fixture, channelID: "q83vEjRWeJCrze8SNFZ4kA==").reason == "ChannelNotRegistered")
            }
        }

        @Test("Throttling is off by default: back-to-back broadcasts on one channel are accepted")
        func noThrottleByDefault() async throws {
            try await EmulatorFixture.with { fixture in
                #expect(fixture.emulator.configuration.broadcastThrottle == nil)
                let channelID = try await fixture.createChannel(policy: 0)
                for _ in 0..<5 { #expect(try await send(fixture, channelID: channelID).status == 200) }
            }
        }

        @Test(
            """
            With throttling on, a channel publishing faster than its rate answers 429 TooManyRequests until it \
            slows down
            """
        )
        func throttle() async throws {
            try await EmulatorFixture.with({
                $0.broadcastThrottle = APNSEmulatorBroadcastThrottle(interval: 1, burst: 2)
            }) { fixture in
                let channelID = try await fixture.createChannel(policy: 0)
                let other = try await fixture.createChannel(policy: 0)
                #expect(try await send(fixture, channelID: channelID).status == 200)
                #expect(try await send(fixture, channelID: channelID).status == 200)
                let refused = try await send(fixture, channelID: channelID)
                #expect(refused.status == 429)
                #expect(refused.reason == "TooManyRequests")
                #expect(refused.header("apns-request-id") != nil)
                // Per channel: another channel publishes meanwhile.
                #expect(try await send(fixture, channelID: other).status == 200)
                // Refused broadcasts do not count: a second later one more goes through, and only one.
                fixture.clock.advance(by: 1)
                #expect(try await send(fixture, channelID: channelID).status == 200)
                #expect(try await send(fixture, channelID: channelID).status == 429)
                #expect(fixture.emulator.pushes(to: channelID, in: .sandbox).count == 3)
            }
        }

        @Test("A No-Message-Stored channel takes apns-expiration 0 only: anything else is BadExpirationDate")
        func storagePolicyExpiration() async throws {
            try await EmulatorFixture.with { fixture in
                let noStorage = try await fixture.createChannel(policy: 0)
                let stored = try await fixture.createChannel(policy: 1)
                let later = String(fixture.nowSeconds + 3600)
                let refused = try await send(fixture, channelID: noStorage, replacing: [("apns-expiration", later)])
                #expect(refused.status == 400)
                #expect(refused.reason == "BadExpirationDate")
                #expect(
                    try await send(fixture, channelID: stored, replacing: [("apns-expiration", later)]).status == 200
                )
            }
        }

        @Test("Beyond 8 hours on a stored channel is capped by default and rejected when configured")
        func storageLimit() async throws {
            try await EmulatorFixture.with({ $0.rejectsBroadcastExpirationBeyondStorageLimit = true }) { fixture in
                let stored = try await fixture.createChannel(policy: 1)
                let tooLate = String(fixture.nowSeconds + 9 * 3600)
                #expect(
                    try await send(fixture, channelID: stored, replacing: [("apns-expiration", tooLate)]).reason
                        == "BadExpirationDate"
                )
            }
        }

        @Test(
            "Each broken broadcast gets the status and reason Apple's servers send",
            arguments: [
                ("missing channel", 400, "MissingChannelId"),
                ("bad channel", 400, "BadChannelId"),
                ("unknown channel", 400, "BadChannelId"),
                ("no push type", 400, "MissingPushType"),
                ("alert push type", 400, "InvalidPushType"),
                ("bad expiration", 400, "BadExpirationDate"),
                ("bad priority", 400, "BadPriority"),
                ("bad request id", 400, "BadMessageId"),
                ("suffixed topic", 400, "TopicDisallowed"),
                ("foreign topic", 403, "TopicMismatch"),
                ("empty body", 400, "PayloadEmpty"),
                ("not JSON", 400, "BadRequestPayload"),
                ("5121 bytes", 413, "PayloadTooLarge"),
                ("GET", 405, "MethodNotAllowed"),
                ("no token", 403, "MissingProviderToken"),
            ]
        )
        func brokenRequests(broken: String, status: Int, reason: String) async throws {
            try await EmulatorFixture.with { fixture in
                _ = try fixture.emulator.makeDemoKey(
                    teamID: "TEAM000002",
                    keyID: "KEY0000002",
                    bundleID: "com.example.foreign"
                )
                let channelID = try await fixture.createChannel(policy: 0)
                let response: TestResponse
                switch broken {
                case "missing channel": response = try await send(fixture, channelID: nil)
                case "bad channel": response = try await send(fixture, channelID: "%%%")
                case "unknown channel": response = try await send(fixture, channelID: "dHN0LXNyY2gtY2hubA==")
                case "no push type":
                    response = try await send(fixture, channelID: channelID, replacing: [("apns-push-type", nil)])
                case "alert push type":
                    response = try await send(fixture, channelID: channelID, replacing: [("apns-push-type", "alert")])
                case "bad expiration":
                    response = try await send(fixture, channelID: channelID, replacing: [("apns-expiration", "soon")])
                case "bad priority":
                    response = try await send(fixture, channelID: channelID, replacing: [("apns-priority", "3")])
                case "bad request id":
                    response = try await send(fixture, channelID: channelID, replacing: [("apns-request-id", "1234")])
                case "suffixed topic":
                    response = try await send(fixture, bundleID: EmulatorFixture.topic, channelID: channelID)
                case "foreign topic":
                    response = try await send(fixture, bundleID: "com.example.foreign", channelID: channelID)
                case "empty body": response = try await send(fixture, channelID: channelID, body: "")
                case "not JSON": response = try await send(fixture, channelID: channelID, body: "{\"aps\":")
                case "5121 bytes":
                    response = try await send(
                        fixture,
                        channelID: channelID,
                        body: "{\"p\":\"" + String(repeating: "x", count: 5113) + "\"}"
                    )
                case "GET": response = try await send(fixture, method: "GET", channelID: channelID)
                default: response = try await send(fixture, channelID: channelID, replacing: [("authorization", nil)])
                }
                #expect(response.status == status)
                #expect(response.reason == reason)
                #expect(response.header("apns-request-id") != nil)
            }
        }

        @Test("A 5120-byte broadcast is accepted")
        func broadcastLimit() async throws {
            try await EmulatorFixture.with { fixture in
                let channelID = try await fixture.createChannel(policy: 0)
                let body = "{\"p\":\"" + String(repeating: "x", count: 5112) + "\"}"
                #expect(body.utf8.count == 5120)
                #expect(try await send(fixture, channelID: channelID, body: body).status == 200)
            }
        }

        @Test("A deleted channel answers ChannelNotRegistered")
        func deletedChannel() async throws {
            try await EmulatorFixture.with { fixture in
                let channelID = try await fixture.createChannel(policy: 0)
                let client = try await fixture.connect(.channelManagement)
                _ = try await client.send(
                    method: "DELETE",
                    path: "/1/apps/\(EmulatorFixture.bundleID)/channels",
                    headers: [try fixture.bearer(), ("apns-channel-id", channelID)]
                )
                await client.close()
                #expect(try await send(fixture, channelID: channelID).reason == "ChannelNotRegistered")
            }
        }
    }

}
