import Foundation
import MarqueeCore
import MarqueeEmulator
import Testing

extension EmulatorTests {
    @Suite("Channel management: create, read, list and delete on the management listener")
    struct ChannelManagementTests {
        @Test("Create answers 201 with apns-channel-id; read, list and delete follow Apple's shapes")
        func lifecycle() async throws {
            try await EmulatorFixture.with { fixture in
                let client = try await fixture.connect(.channelManagement)
                let requestID = "2288cf3f-70d8-46a6-97d7-dd5d00867127"
                let created = try await client.send(
                    path: "/1/apps/\(EmulatorFixture.bundleID)/channels",
                    headers: [try fixture.bearer(), ("apns-request-id", requestID)],
                    body: #"{"message-storage-policy": 1, "push-type": "LiveActivity"}"#
                )
                #expect(created.status == 201)
                #expect(created.body.isEmpty)
                #expect(created.header("apns-request-id") == requestID)
                let channelID = try #require(created.header("apns-channel-id"))
                #expect(Data(base64Encoded: channelID) != nil)

                let read = try await client.send(
                    method: "GET",
                    path: "/1/apps/\(EmulatorFixture.bundleID)/channels",
                    headers: [try fixture.bearer(), ("apns-channel-id", channelID)]
                )
                #expect(read.status == 200)
                #expect(read.json?["message-storage-policy"] as? Int == 1)
                #expect(read.json?["push-type"] as? String == "LiveActivity")
                #expect(read.header("apns-request-id") != nil)

                let list = try await client.send(
                    method: "GET",
                    path: "/1/apps/\(EmulatorFixture.bundleID)/all-channels",
                    headers: [try fixture.bearer()]
                )
                #expect(list.status == 200)
                #expect(list.json?["channels"] as? [String] == [channelID])

                let deleted = try await client.send(
                    method: "DELETE",
                    path: "/1/apps/\(EmulatorFixture.bundleID)/channels",
                    headers: [try fixture.bearer(), ("apns-channel-id", channelID)]
                )
                #expect(deleted.status == 204)
                let again = try await client.send(
                    method: "GET",
                    path: "/1/apps/\(EmulatorFixture.bundleID)/channels",
                    headers: [try fixture.bearer(), ("apns-channel-id", channelID)]
                )
                #expect(again.status == 400)
                #expect(again.reason == "ChannelNotRegistered")
                let emptyList = try await client.send(
                    method: "GET",
                    path: "/1/apps/\(EmulatorFixture.bundleID)/all-channels",
                    headers: [try fixture.bearer()]
                )
                #expect(emptyList.json?["channels"] as? [String] == [])
                await client.close()
            }
        }

        @Test(
            "Broken channel requests get the reasons Apple's servers send",
            arguments: [
                ("POST", "channels", nil, #"{"message-storage-policy": 1}"#, 400, "BadRequestParams"),
                (
                    "POST", "channels", nil,
                    #"{"message-storage-policy": 1, "push-type": "LiveActivity", "colour": "red"}"#, 400,
                    "BadRequestParams"
                ),
                (
                    "POST", "channels", nil, #"{"message-storage-policy": 7, "push-type": "LiveActivity"}"#, 400,
                    "BadRequestParams"
                ),
                (
                    "POST", "channels", nil, #"{"message-storage-policy": 1, "push-type": "alert"}"#, 400,
                    "InvalidPushType"
                ),
                ("POST", "channels", nil, #"{"message-storage-policy": "#, 400, "BadRequestPayload"),
                ("POST", "channels", nil, "", 400, "PayloadEmpty"),
                ("GET", "channels", nil, "", 400, "MissingChannelId"),
                ("GET", "channels", "not base64!", "", 400, "BadChannelId"),
                ("GET", "channels", String(repeating: "QUFB", count: 40), "", 400, "BadChannelId"),
                ("DELETE", "channels", "dHN0LXNyY2gtY2hubA==", "", 404, "BadPath"),
                ("DELETE", "channels", "not base64!", "", 400, "BadChannelId"),
                ("PUT", "channels", nil, "", 405, "MethodNotAllowed"),
                ("POST", "all-channels", nil, "", 405, "MethodNotAllowed"),
                ("GET", "channels/dHN0LXNyY2gtY2hubA==", nil, "", 404, "BadPath"),
            ] as [(String, String, String?, String, Int, String)]
        )
        func brokenRequests(
            method: String,
            resource: String,
            channelID: String?,
            body: String,
            status: Int,
            reason: String
        ) async throws {
            try await EmulatorFixture.with { fixture in
                let client = try await fixture.connect(.channelManagement)
                var headers = [try fixture.bearer()]
                if let channelID { headers.append(("apns-channel-id", channelID)) }
                let response = try await client.send(
                    method: method,
                    path: "/1/apps/\(EmulatorFixture.bundleID)/\(resource)",
                    headers: headers,
                    body: body
                )
                #expect(response.status == status)
                #expect(response.reason == reason)
                #expect(response.header("apns-request-id") != nil)
                #expect(response.header("apns-id") == nil)
                await client.close()
            }
        }

        @Test(
            """
            A bundle with a push-type suffix, of another team, or without broadcast answers TopicDisallowed, \
            TopicMismatch, and the profile's FeatureNotEnabled
            """,
            arguments: [
                (APNSEmulatorProfile.observed, "BroadcastFeatureNotEnabled"), (.documented, "FeatureNotEnabled"),
            ]
        )
        func topicRules(profile: APNSEmulatorProfile, featureReason: String) async throws {
            try await EmulatorFixture.with(profile: profile) { fixture in
                _ = try fixture.emulator.makeDemoKey(
                    teamID: "TEAM000002",
                    keyID: "KEY0000002",
                    bundleID: "com.example.foreign"
                )
                try fixture.emulator.registerApp(
                    bundleID: "com.example.nobroadcast",
                    teamID: fixture.key.teamID,
                    broadcastEnabled: false
                )
                let client = try await fixture.connect(.channelManagement)
                for (bundleID, reason) in [
                    (EmulatorFixture.topic, "TopicDisallowed"), ("com.example.foreign", "TopicMismatch"),
                    ("com.example.nobroadcast", featureReason),
                ] {
                    let response = try await client.send(
                        method: "GET",
                        path: "/1/apps/\(bundleID)/all-channels",
                        headers: [try fixture.bearer()]
                    )
                    #expect(response.reason == reason, "\(bundleID)")
                }
                // Channel creation, where Apple's servers were seen answering it, says the same (400).
                let created = try await client.send(
                    path: "/1/apps/com.example.nobroadcast/channels",
                    headers: [try fixture.bearer()],
                    body: #"{"message-storage-policy": 1, "push-type": "LiveActivity"}"#
                )
                #expect(created.status == 400)
                #expect(created.reason == featureReason)
                await client.close()
            }
        }

        @Test("Channels per app and environment are capped: one more answers CannotCreateChannelConfig")
        func channelLimit() async throws {
            try await EmulatorFixture.with({ $0.channelsPerApp = 3 }) { fixture in
                for _ in 0..<3 { _ = try await fixture.createChannel() }
                let client = try await fixture.connect(.channelManagement)
                let refused = try await client.send(
                    path: "/1/apps/\(EmulatorFixture.bundleID)/channels",
                    headers: [try fixture.bearer()],
                    body: #"{"message-storage-policy": 0, "push-type": "LiveActivity"}"#
                )
                #expect(refused.status == 400)
                #expect(refused.reason == "CannotCreateChannelConfig")
                // The other environment has its own allowance.
                _ = try await fixture.createChannel(environment: .production)
                await client.close()
            }
        }

        @Test("An app over its hourly channel-management budget answers 429 TooManyRequests")
        func managementBudget() async throws {
            try await EmulatorFixture.with({ $0.channelManagementBudgetPerHour = 2 }) { fixture in
                _ = try await fixture.createChannel()
                _ = try await fixture.createChannel()
                let client = try await fixture.connect(.channelManagement)
                let listed = try await client.send(
                    method: "GET",
                    path: "/1/apps/\(EmulatorFixture.bundleID)/all-channels",
                    headers: [try fixture.bearer()]
                )
                #expect(listed.status == 429)
                #expect(listed.reason == "TooManyRequests")
                fixture.clock.advance(by: 3600)
                let later = try await client.send(
                    method: "GET",
                    path: "/1/apps/\(EmulatorFixture.bundleID)/all-channels",
                    headers: [try fixture.bearer()]
                )
                #expect(later.status == 200)
                await client.close()
            }
        }

        @Test(
            """
            Deleting an unknown or already-deleted channel answers 404 BadPath as observed, 400 \
            ChannelNotRegistered as documented
            """,
            arguments: [(APNSEmulatorProfile.observed, 404, "BadPath"), (.documented, 400, "ChannelNotRegistered")]
        )
        func deleteTwice(profile: APNSEmulatorProfile, status: Int, reason: String) async throws {
            try await EmulatorFixture.with(profile: profile) { fixture in
                let channelID = try await fixture.createChannel()
                let client = try await fixture.connect(.channelManagement)
                func delete(_ id: String) async throws -> TestResponse {
                    try await client.send(
                        method: "DELETE",
                        path: "/1/apps/\(EmulatorFixture.bundleID)/channels",
                        headers: [try fixture.bearer(), ("apns-channel-id", id)]
                    )
                }
                #expect(try await delete(channelID).status == 204)
                for id in [channelID, "q83vEjRWeJCrze8SNFZ4kA=="] {
                    let again = try await delete(id)
                    #expect(again.status == status)
                    #expect(again.reason == reason)
                    #expect(again.header("apns-request-id") != nil)
                }
                // A read of the deleted channel answers ChannelNotRegistered in both profiles.
                let read = try await client.send(
                    method: "GET",
                    path: "/1/apps/\(EmulatorFixture.bundleID)/channels",
                    headers: [try fixture.bearer(), ("apns-channel-id", channelID)]
                )
                #expect(read.reason == "ChannelNotRegistered")
                await client.close()
            }
        }

        @Test(
            "Channel IDs are 16 random bytes in standard base64, 24 characters, in both profiles",
            arguments: APNSEmulatorProfile.allCases
        )
        func channelIDShape(profile: APNSEmulatorProfile) async throws {
            try await EmulatorFixture.with(profile: profile) { fixture in
                var ids: Set<String> = []
                for _ in 0..<8 {
                    let id = try await fixture.createChannel()
                    #expect(id.utf8.count == 24)
                    #expect(Data(base64Encoded: id)?.count == 16)
                    #expect(id.hasSuffix("=="))
                    #expect(id.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "+/=".contains($0)) })
                    ids.insert(id)
                }
                #expect(ids.count == 8)
            }
        }

        @Test("The default cap is Apple's 10,000")
        func defaultLimit() {
            #expect(APNSEmulatorConfiguration().channelsPerApp == 10_000)
        }

        @Test("Channels of one environment do not exist in the other")
        func environmentsAreSeparate() async throws {
            try await EmulatorFixture.with { fixture in
                let channelID = try await fixture.createChannel(environment: .sandbox)
                let client = try await fixture.connect(.channelManagement, environment: .production)
                let response = try await client.send(
                    method: "GET",
                    path: "/1/apps/\(EmulatorFixture.bundleID)/channels",
                    headers: [try fixture.bearer(), ("apns-channel-id", channelID)]
                )
                #expect(response.reason == "ChannelNotRegistered")
                await client.close()
            }
        }
    }

}
