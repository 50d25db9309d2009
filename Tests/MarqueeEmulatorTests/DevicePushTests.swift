import Foundation
import MarqueeCore
import MarqueeEmulator
import NIOHTTP2
import Testing

extension EmulatorTests {
    @Suite("Device pushes: POST /3/device/<token> with every documented header rule")
    struct DevicePushTests {
        private static let alertBody = #"{"aps":{"alert":"hello"}}"#

        /// Sends an alert push with `headers` replacing or adding to a valid set, and returns the answer.
        private func send(
            _ fixture: EmulatorFixture,
            method: String = "POST",
            path: String? = nil,
            replacing overrides: [(String, String?)] = [],
            adding extra: [(String, String)] = [],
            body: [UInt8] = Array(Self.alertBody.utf8),
            environment: APNSEnvironment = .sandbox
        ) async throws -> TestResponse {
            let device = try fixture.emulator.registerDevice(
                environment: environment,
                bundleID: EmulatorFixture.bundleID
            )
            var headers: [(String, String)] = [
                try fixture.bearer(), ("apns-push-type", "alert"), ("apns-topic", EmulatorFixture.bundleID),
            ]
            for (name, value) in overrides {
                headers.removeAll { $0.0 == name }
                if let value { headers.append((name, value)) }
            }
            headers += extra
            let client = try await fixture.connect(environment: environment)
            defer { Task { await client.close() } }
            return try await client.send(
                method: method,
                path: path ?? "/3/device/\(device.deviceToken)",
                headers: headers,
                body: body
            )
        }

        @Test("A valid push answers 200 with the apns-id it was given and, in the sandbox, an apns-unique-id")
        func success() async throws {
            try await EmulatorFixture.with { fixture in
                let apnsID = "0d9c6c45-3f1e-4d3b-9f4a-2f7c8d3b1e55"
                let response = try await send(fixture, adding: [("apns-id", apnsID)])
                #expect(response.status == 200)
                #expect(response.body.isEmpty)
                #expect(response.header("apns-id") == apnsID)
                #expect(response.header("apns-unique-id") != nil)

                let production = try await send(fixture, environment: .production)
                #expect(production.status == 200)
                #expect(production.header("apns-id")?.count == 36)
                #expect(production.header("apns-unique-id") == nil)
            }
        }

        @Test(
            "Each broken request gets its documented status and reason",
            arguments: [
                (Case.method("GET"), 405, "MethodNotAllowed"),
                (.path("/3/device/"), 400, "MissingDeviceToken"),
                (.path("/3/devices/abcd"), 404, "BadPath"),
                (.path("/2/device/abcd"), 404, "BadPath"),
                (.path("/3/device/not-hex"), 400, "BadDeviceToken"),
                (.path("/3/device/" + String(repeating: "ab", count: 32)), 400, "BadDeviceToken"),
                (.header("apns-push-type", "carrier-pigeon"), 400, "InvalidPushType"),
                (.header("apns-topic", nil), 400, "MissingTopic"),
                (.header("apns-topic", "com.example.unknown"), 400, "DeviceTokenNotForTopic"),
                (.header("apns-expiration", "tomorrow"), 400, "BadExpirationDate"),
                (.header("apns-priority", "7"), 400, "BadPriority"),
                (.header("apns-collapse-id", String(repeating: "c", count: 65)), 400, "BadCollapseId"),
                (.header("apns-id", "not-a-uuid"), 400, "BadMessageId"),
                (.duplicate("apns-topic", EmulatorFixture.bundleID), 400, "DuplicateHeaders"),
                (.body(""), 400, "PayloadEmpty"),
                (.body(String(repeating: "x", count: 4097)), 413, "PayloadTooLarge"),
            ]
        )
        func brokenRequests(broken: Case, status: Int, reason: String) async throws {
            try await EmulatorFixture.with { fixture in
                let response: TestResponse
                switch broken {
                case .method(let method): response = try await send(fixture, method: method)
                case .path(let path): response = try await send(fixture, path: path)
                case .header(let name, let value): response = try await send(fixture, replacing: [(name, value)])
                case .duplicate(let name, let value): response = try await send(fixture, adding: [(name, value)])
                case .body(let body): response = try await send(fixture, body: Array(body.utf8))
                }
                #expect(response.status == status)
                #expect(response.reason == reason)
                #expect(response.header("content-type") == "application/json")
                #expect(response.header("apns-id") != nil)
                #expect(fixture.emulator.rejectedRequests().last?.reason == reason)
            }
        }

        enum Case: Sendable, CustomTestStringConvertible {
            case method(String)
            case path(String)
            case header(String, String?)
            case duplicate(String, String)
            case body(String)

            var testDescription: String {
                switch self {
                case .method(let method): "method \(method)"
                case .path(let path): "path \(path.prefix(30))"
                case .header(let name, let value): "\(name): \(value.map { String($0.prefix(20)) } ?? "absent")"
                case .duplicate(let name, _): "\(name) twice"
                case .body(let body): "body of \(body.utf8.count) bytes"
                }
            }
        }

        @Test("Background pushes at priority 10 answer BadPriority")
        func backgroundPriority() async throws {
            try await EmulatorFixture.with { fixture in
                let response = try await send(
                    fixture,
                    replacing: [("apns-push-type", "background"), ("apns-priority", "10")]
                )
                #expect(response.reason == "BadPriority")
                #expect(
                    try await send(fixture, replacing: [("apns-push-type", "background"), ("apns-priority", "5")])
                        .status == 200
                )
            }
        }

        @Test("A Live Activity topic must carry .push-type.liveactivity")
        func liveActivityTopic() async throws {
            try await EmulatorFixture.with { fixture in
                let bare = try await send(fixture, replacing: [("apns-push-type", "liveactivity")])
                #expect(bare.reason == "BadTopic")
                let suffixed = try await send(
                    fixture,
                    replacing: [("apns-push-type", "Liveactivity"), ("apns-topic", EmulatorFixture.topic)]
                )
                #expect(suffixed.status == 200)
            }
        }

        /// A JSON body of exactly `size` bytes.
        private static func padding(_ size: Int) -> [UInt8] {
            Array(("{\"p\":\"" + String(repeating: "x", count: size - 8) + "\"}").utf8)
        }

        @Test("Payloads are limited to 4096 bytes, VoIP to 5120")
        func payloadLimits() async throws {
            try await EmulatorFixture.with { fixture in
                #expect(Self.padding(4096).count == 4096)
                let atLimit = try await send(fixture, body: Self.padding(4096))
                let overLimit = try await send(fixture, body: Self.padding(4097))
                #expect(atLimit.status == 200)
                #expect(overLimit.status == 413)
                let voip: [(String, String?)] = [
                    ("apns-push-type", "voip"), ("apns-topic", EmulatorFixture.bundleID + ".voip"),
                ]
                let voipAtLimit = try await send(fixture, replacing: voip, body: Self.padding(5120))
                let voipOverLimit = try await send(fixture, replacing: voip, body: Self.padding(5121))
                #expect(voipAtLimit.status == 200)
                #expect(voipOverLimit.reason == "PayloadTooLarge")
            }
        }

        @Test("A body that disagrees with its content-length resets the stream with PROTOCOL_ERROR, as HTTP/2 requires")
        func contentLength() async throws {
            try await EmulatorFixture.with { fixture in
                let body = Array(Self.alertBody.utf8)
                let agreeing = try await send(fixture, adding: [("content-length", String(body.count))], body: body)
                #expect(agreeing.status == 200)
                for declared in [String(body.count + 1), String(body.count - 1), "many"] {
                    await #expect(throws: StreamReset(code: .protocolError)) {
                        try await send(fixture, adding: [("content-length", declared)], body: body)
                    }
                }
            }
        }

        @Test("Device tokens are hexadecimal in either case; anything else is a BadDeviceToken")
        func tokenCase() async throws {
            try await EmulatorFixture.with { fixture in
                let device = try fixture.emulator.registerDevice(
                    environment: .sandbox,
                    bundleID: EmulatorFixture.bundleID
                )
                let upper = try await send(fixture, path: "/3/device/\(device.deviceToken.uppercased())")
                #expect(upper.status == 200)
                for path in [
                    "/3/device/\(device.deviceToken.dropLast())", "/3/device/\(device.deviceToken.dropLast(2))zz",
                    "/3/device/é\(device.deviceToken.dropFirst(2))",
                ] {
                    let response = try await send(fixture, path: path)
                    #expect(response.reason == "BadDeviceToken", "\(path)")
                }
            }
        }

        @Test("A token from the other environment is a BadDeviceToken")
        func environmentsAreSeparate() async throws {
            try await EmulatorFixture.with { fixture in
                let production = try fixture.emulator.registerDevice(
                    environment: .production,
                    bundleID: EmulatorFixture.bundleID
                )
                let response = try await send(fixture, path: "/3/device/\(production.deviceToken)")
                #expect(response.status == 400)
                #expect(response.reason == "BadDeviceToken")
            }
        }

        @Test("A token of a removed app answers 410 Unregistered with a millisecond timestamp")
        func unregistered() async throws {
            try await EmulatorFixture.with { fixture in
                let device = try fixture.emulator.registerDevice(
                    environment: .sandbox,
                    bundleID: EmulatorFixture.bundleID
                )
                let removedAt = fixture.clock.now
                try fixture.emulator.uninstallApp(environment: .sandbox, deviceID: device.id)
                fixture.clock.advance(by: 90)
                let response = try await send(fixture, path: "/3/device/\(device.deviceToken)")
                #expect(response.status == 410)
                #expect(response.reason == "Unregistered")
                let timestamp = try #require(response.json?["timestamp"] as? Int)
                #expect(Int64(timestamp) == Int64(removedAt.timeIntervalSince1970 * 1000))
            }
        }

        @Test("Another app's token answers DeviceTokenNotForTopic")
        func tokenOfAnotherApp() async throws {
            try await EmulatorFixture.with { fixture in
                try fixture.emulator.registerApp(bundleID: "com.example.second", teamID: fixture.key.teamID)
                let device = try fixture.emulator.registerDevice(environment: .sandbox, bundleID: "com.example.second")
                let response = try await send(fixture, path: "/3/device/\(device.deviceToken)")
                #expect(response.reason == "DeviceTokenNotForTopic")
            }
        }

        @Test("h2c listeners serve the same API")
        func cleartext() async throws {
            try await EmulatorFixture.with { fixture in
                let device = try fixture.emulator.registerDevice(
                    environment: .sandbox,
                    bundleID: EmulatorFixture.bundleID
                )
                let client = try await fixture.connect(transport: .h2c)
                let response = try await client.send(
                    path: "/3/device/\(device.deviceToken)",
                    headers: [try fixture.bearer(), ("apns-topic", EmulatorFixture.bundleID)],
                    body: Self.alertBody
                )
                #expect(response.status == 200)
                #expect(
                    fixture.emulator.pushes(to: device.deviceToken, in: .sandbox).map(\.payload) == [Self.alertBody]
                )
                await client.close()
            }
        }
    }

}
