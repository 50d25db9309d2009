import Crypto
import Foundation
import MarqueeCore
import MarqueeEmulator
import MarqueeTesting
import Testing

extension EmulatorTests {
    /// A client nobody here wrote: Apple's command-line recipe (openssl for the JWT, curl --http2 for
    /// the requests) against the emulator, with Apple's URLs unchanged and only routed to the
    /// emulator's ports with `--connect-to`.
    @Suite("curl and openssl, as in Apple's command-line guide, work against the emulator unchanged", .serialized)
    struct CurlCompatibilityTests {
        struct CurlResult {
            var status: Int
            var headers: [String: String]
            var body: String

            var reason: String? {
                (try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])?["reason"] as? String
            }
        }

        /// Runs a shell script and returns its standard output.
        @discardableResult
        static func shell(_ script: String, environment: [String: String] = [:]) async throws -> String {
            let merged = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            return try await ChildProcess.run(["/bin/bash", "-c", script], environment: merged, errors: .discarded)
                .output
        }

        /// Apple's JWT recipe, verbatim but for the variables: header and claims through
        /// `openssl base64`, the signature from `openssl dgst -sha256 -sign` (DER).
        static let jwtRecipe = #"""
            JWT_HEADER=$(printf '{ "alg": "ES256", "kid": "%s" }' "${AUTH_KEY_ID}" | openssl base64 -e -A | tr -- \#
            '+/' '-_' | tr -d =)
            JWT_CLAIMS=$(printf '{ "iss": "%s", "iat": %d }' "${TEAM_ID}" "${JWT_ISSUE_TIME}" | openssl base64 -e -A \#
            | tr -- '+/' '-_' | tr -d =)
            JWT_HEADER_CLAIMS="${JWT_HEADER}.${JWT_CLAIMS}"
            JWT_SIGNED_HEADER_CLAIMS=$(printf "${JWT_HEADER_CLAIMS}" | openssl dgst -binary -sha256 -sign \#
            "${TOKEN_KEY_FILE_NAME}" | openssl base64 -e -A | tr -- '+/' '-_' | tr -d =)
            printf '%s' "${JWT_HEADER}.${JWT_CLAIMS}.${JWT_SIGNED_HEADER_CLAIMS}"
            """#

        struct Setup {
            let emulator: APNSEmulator
            let directory: URL
            let keyFile: String
            let teamID = "CURLTEAM01"
            let keyID = "CURLKEY001"
            let topic = "com.example.curl"

            func jwt(issuedAt: Date = Date()) async throws -> String {
                try await CurlCompatibilityTests.shell(
                    CurlCompatibilityTests.jwtRecipe,
                    environment: [
                        "AUTH_KEY_ID": keyID, "TEAM_ID": teamID, "TOKEN_KEY_FILE_NAME": keyFile,
                        "JWT_ISSUE_TIME": String(Int(issuedAt.timeIntervalSince1970)),
                    ]
                )
            }

            /// `curl --http2 --cacert <emulator CA>` with Apple's host routed to the emulator's port.
            func curl(_ url: String, _ arguments: [String]) async throws -> CurlResult {
                guard let components = URLComponents(string: url), let host = components.host else {
                    throw URLError(.badURL)
                }
                let port = components.port ?? 443
                let environment: APNSEnvironment = host.contains("sandbox") ? .sandbox : .production
                let kind: APNSEmulatorListener.Kind =
                    host.hasPrefix("api-manage-broadcast") ? .channelManagement : .push
                guard
                    let emulatorPort = emulator.port(
                        for: APNSEmulatorListener(environment: environment, kind: kind, transport: .tls)
                    ),
                    let caPath = emulator.caCertificatePath
                else { throw EmulatorError.notRunning }
                let headerFile = directory.appendingPathComponent("headers-\(UUID().uuidString)").path
                let quoted =
                    ([
                        "curl", "-s", "--http2", "--cacert", caPath, "--connect-to",
                        "\(host):\(port):127.0.0.1:\(emulatorPort)", "-D", headerFile,
                    ]
                    + arguments + [url])
                    .map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
                    .joined(separator: " ")
                let body = try await CurlCompatibilityTests.shell(quoted)
                let rawHeaders = (try? String(contentsOfFile: headerFile, encoding: .utf8)) ?? ""
                var status = 0
                var headers: [String: String] = [:]
                for line in rawHeaders.split(whereSeparator: \.isNewline) {
                    if line.hasPrefix("HTTP/") {
                        status = Int(line.split(separator: " ")[1]) ?? 0
                    } else if let colon = line.firstIndex(of: ":") {
                        headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                            in: .whitespaces
                        )
                    }
                }
                return CurlResult(status: status, headers: headers, body: body)
            }
        }

        static func withSetup(
            profile: APNSEmulatorProfile = .observed,
            _ body: (Setup) async throws -> Void
        ) async throws {
            let emulator = APNSEmulator(configuration: APNSEmulatorConfiguration(profile: profile))
            try await emulator.start()
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "marquee-curl-\(UUID().uuidString)"
            )
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            do {
                // A .p8 the way Apple issues one: PKCS#8 PEM of a P-256 key.
                let keyFile = directory.appendingPathComponent("AuthKey_CURLKEY001.p8").path
                try await shell(
                    "openssl ecparam -name prime256v1 -genkey -noout | openssl pkcs8 -topk8 -nocrypt -out '\(keyFile)'"
                )
                let publicPEM = try await shell("openssl ec -in '\(keyFile)' -pubout 2>/dev/null")
                let setup = Setup(emulator: emulator, directory: directory, keyFile: keyFile)
                try emulator.registerApp(bundleID: setup.topic, teamID: setup.teamID)
                emulator.registerKey(
                    teamID: setup.teamID,
                    keyID: setup.keyID,
                    publicKey: try P256.Signing.PublicKey(pemRepresentation: publicPEM)
                )
                try await body(setup)
                await emulator.shutdown()
            } catch {
                await emulator.shutdown()
                throw error
            }
        }

        @Test("Device pushes: an alert, a Live Activity start and an update with Apple's curl command")
        func devicePushes() async throws {
            try await Self.withSetup { setup in
                let token = try await setup.jwt()
                let device = try setup.emulator.registerDevice(
                    environment: .sandbox,
                    bundleID: setup.topic,
                    iOSVersion: "18.0",
                    pushToStartAttributesTypes: ["MatchAttributes"]
                )
                let host = "https://api.sandbox.push.apple.com"
                let alert = try await setup.curl(
                    "\(host)/3/device/\(device.deviceToken)",
                    [
                        "--header", "apns-topic: \(setup.topic)", "--header", "apns-push-type: alert",
                        "--header", "authorization: bearer \(token)", "--data", #"{"aps":{"alert":"test"}}"#,
                    ]
                )
                #expect(alert.status == 200)
                #expect(alert.headers["apns-id"] != nil)
                #expect(alert.headers["apns-unique-id"] != nil)

                let now = Int(Date().timeIntervalSince1970)
                let liveActivityHeaders = [
                    "--header", "apns-topic: \(setup.topic).push-type.liveactivity", "--header",
                    "apns-push-type: liveactivity",
                    "--header", "apns-priority: 10", "--header", "authorization: bearer \(token)",
                ]
                let start = try await setup.curl(
                    "\(host)/3/device/\(device.pushToStartTokens["MatchAttributes"] ?? "")",
                    liveActivityHeaders + [
                        "--data",
                        #"""
                        {"aps":{"timestamp":\#(now),"event":"start","content-state":{"score":"0-0"},\#
                        "attributes-type":"MatchAttributes","attributes":{"matchId":"m1"},\#
                        "alert":{"title":"Kick-off","body":"Home v Away"},"input-push-token":1}}
                        """#,
                    ]
                )
                #expect(start.status == 200)
                let updateToken = try #require(setup.emulator.reportedUpdateTokens(in: .sandbox).first?.token)
                let update = try await setup.curl(
                    "\(host)/3/device/\(updateToken)",
                    liveActivityHeaders + [
                        "--data",
                        #"{"aps":{"timestamp":\#(now + 1),"event":"update","content-state":{"score":"1-0"}}}"#,
                    ]
                )
                #expect(update.status == 200)
                #expect(setup.emulator.activities(in: .sandbox).first?.contentState == ["score": "1-0"])

                // Broken variants answer the documented reasons.
                let noToken = try await setup.curl(
                    "\(host)/3/device/\(device.deviceToken)",
                    [
                        "--header", "apns-topic: \(setup.topic)", "--data", #"{"aps":{"alert":"test"}}"#,
                    ]
                )
                #expect(noToken.status == 403)
                #expect(noToken.reason == "MissingProviderToken")
                let expiredToken = try await setup.jwt(issuedAt: Date().addingTimeInterval(-3700))
                let expired = try await setup.curl(
                    "\(host)/3/device/\(device.deviceToken)",
                    [
                        "--header", "apns-topic: \(setup.topic)", "--header", "authorization: bearer \(expiredToken)",
                        "--data", #"{"aps":{"alert":"test"}}"#,
                    ]
                )
                #expect(expired.reason == "ExpiredProviderToken")
                let unknownDevice = try await setup.curl(
                    "\(host)/3/device/\(String(repeating: "0f", count: 32))",
                    [
                        "--header", "apns-topic: \(setup.topic)", "--header", "authorization: bearer \(token)",
                        "--data", #"{"aps":{"alert":"test"}}"#,
                    ]
                )
                #expect(unknownDevice.status == 400)
                #expect(unknownDevice.reason == "BadDeviceToken")
                let wrongTopic = try await setup.curl(
                    "\(host)/3/device/\(device.deviceToken)",
                    [
                        "--header", "apns-topic: com.example.other", "--header", "authorization: bearer \(token)",
                        "--data", #"{"aps":{"alert":"test"}}"#,
                    ]
                )
                #expect(wrongTopic.reason == "DeviceTokenNotForTopic")
            }
        }

        /// Apple's broadcast recipe leaves out `apns-expiration`. Apple's servers refuse that (§6a), so
        /// against the observed profile the recipe gets its answer and then goes through with the
        /// header added; the documented profile takes it as written.
        @Test(
            "Channel create, read, list, broadcast and delete with Apple's curl commands",
            arguments: APNSEmulatorProfile.allCases
        )
        func channels(profile: APNSEmulatorProfile) async throws {
            try await Self.withSetup(profile: profile) { setup in
                let token = try await setup.jwt()
                let manage = "https://api-manage-broadcast.sandbox.push.apple.com:2195/1/apps/\(setup.topic)"
                let created = try await setup.curl(
                    "\(manage)/channels",
                    [
                        "--header", "authorization: bearer \(token)", "--header",
                        "apns-request-id: 2288cf3f-70d8-46a6-97d7-dd5d00867127",
                        "--data", #"{"message-storage-policy": 1, "push-type": "liveactivity"}"#,
                    ]
                )
                #expect(created.status == 201)
                #expect(created.headers["apns-request-id"] == "2288cf3f-70d8-46a6-97d7-dd5d00867127")
                let channelID = try #require(created.headers["apns-channel-id"])

                let read = try await setup.curl(
                    "\(manage)/channels",
                    [
                        "-X", "GET", "--header", "authorization: bearer \(token)", "--header",
                        "apns-channel-id: \(channelID)",
                    ]
                )
                #expect(read.status == 200)
                #expect(read.body == #"{"message-storage-policy":1,"push-type":"LiveActivity"}"#)

                let list = try await setup.curl(
                    "\(manage)/all-channels",
                    ["-X", "GET", "--header", "authorization: bearer \(token)"]
                )
                #expect(list.status == 200)
                #expect(list.body == #"{"channels":["\#(channelID)"]}"#)

                let recipe = [
                    "--header", "authorization: bearer \(token)", "--header", "apns-channel-id: \(channelID)",
                    "--header", "apns-push-type: Liveactivity", "--header", "apns-priority: 10",
                    "--data",
                    #"""
                    {"aps":{"timestamp":\#(Int(Date().timeIntervalSince1970)),"event":"update",\#
                    "content-state":{"score":"1-0"}}}
                    """#,
                ]
                let broadcastURL = "https://api.sandbox.push.apple.com/4/broadcasts/apps/\(setup.topic)"
                var broadcast = try await setup.curl(broadcastURL, recipe)
                if profile == .observed {
                    #expect(broadcast.status == 400)
                    #expect(broadcast.reason == "BadExpirationDate")
                    broadcast = try await setup.curl(broadcastURL, recipe + ["--header", "apns-expiration: 0"])
                }
                #expect(broadcast.status == 200)
                #expect(broadcast.headers["apns-request-id"] != nil)
                #expect(broadcast.headers["apns-unique-id"] != nil)

                let missingChannel = try await setup.curl(
                    "https://api.sandbox.push.apple.com/4/broadcasts/apps/\(setup.topic)",
                    [
                        "--header", "authorization: bearer \(token)", "--header", "apns-push-type: Liveactivity",
                        "--data", #"{"aps":{}}"#,
                    ]
                )
                #expect(missingChannel.reason == "MissingChannelId")
                let badBody = try await setup.curl(
                    "\(manage)/channels",
                    [
                        "--header", "authorization: bearer \(token)", "--data", #"{"message-storage-policy": 1}"#,
                    ]
                )
                #expect(badBody.reason == "BadRequestParams")

                let deleted = try await setup.curl(
                    "\(manage)/channels",
                    [
                        "-X", "DELETE", "--header", "authorization: bearer \(token)", "--header",
                        "apns-channel-id: \(channelID)",
                    ]
                )
                #expect(deleted.status == 204)
                let gone = try await setup.curl(
                    "\(manage)/channels",
                    [
                        "-X", "GET", "--header", "authorization: bearer \(token)", "--header",
                        "apns-channel-id: \(channelID)",
                    ]
                )
                #expect(gone.status == 400)
                #expect(gone.reason == "ChannelNotRegistered")
                let deletedAgain = try await setup.curl(
                    "\(manage)/channels",
                    [
                        "-X", "DELETE", "--header", "authorization: bearer \(token)", "--header",
                        "apns-channel-id: \(channelID)",
                    ]
                )
                #expect(deletedAgain.status == (profile == .observed ? 404 : 400))
                #expect(deletedAgain.reason == (profile == .observed ? "BadPath" : "ChannelNotRegistered"))
            }
        }
    }

}
