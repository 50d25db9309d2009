import Foundation
import MarqueeCore
import MarqueeEmulator
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension EmulatorTests {
    @Suite("The inspection API shows devices, activities, tokens, pushes and rejections as JSON")
    struct InspectionAPITests {
        private func request(
            _ fixture: EmulatorFixture,
            _ method: String,
            _ path: String,
            body: String? = nil
        ) async throws -> (Int, Any) {
            let (status, data) = try await fixture.inspect(method, path, body: body)
            return (status, try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]))
        }

        @Test("Register a device over HTTP, start an activity, and read it all back")
        func walkthrough() async throws {
            try await EmulatorFixture.with { fixture in
                let (status, registered) = try await request(
                    fixture,
                    "POST",
                    "/v1/sandbox/devices",
                    body:
                        #"""
                        {"bundleID": "com.example.marquee", "iOSVersion": "18.0", "pushToStartAttributesTypes": \#
                        ["MatchAttributes"]}
                        """#
                )
                #expect(status == 200)
                let device = try #require(registered as? [String: Any])
                let deviceID = try #require(device["id"] as? String)
                let pushToStart = try #require((device["pushToStartTokens"] as? [String: String])?["MatchAttributes"])

                _ = try await fixture.pushLiveActivity(
                    to: pushToStart,
                    body: Payloads.start(timestamp: fixture.nowSeconds, inputPushToken: true)
                )
                _ = try await fixture.pushLiveActivity(to: "abcd", body: "{}")

                let (_, devices) = try await request(fixture, "GET", "/v1/sandbox/devices")
                #expect((devices as? [[String: Any]])?.map { $0["id"] as? String } == [deviceID])
                let (_, activities) = try await request(fixture, "GET", "/v1/sandbox/activities")
                let activity = try #require((activities as? [[String: Any]])?.first)
                #expect(activity["phase"] as? String == "active")
                #expect((activity["contentState"] as? [String: String]) == ["score": "0-0"])
                let (_, tokens) = try await request(fixture, "GET", "/v1/sandbox/update-tokens")
                #expect((tokens as? [[String: Any]])?.first?["activityID"] as? String == activity["id"] as? String)
                let (_, pushes) = try await request(fixture, "GET", "/v1/sandbox/pushes/\(pushToStart)")
                #expect((pushes as? [[String: Any]])?.first?["outcomes"] as? [String] == ["applied"])
                let (_, rejections) = try await request(fixture, "GET", "/v1/rejections")
                #expect((rejections as? [[String: Any]])?.last?["reason"] as? String == "BadDeviceToken")
                let (_, summary) = try await request(fixture, "GET", "/v1/summary")
                let counters = try #require((summary as? [String: Any])?["counters"] as? [String: Any])
                #expect(counters["devicePushesAccepted"] as? Int == 1)
                #expect(counters["rejected"] as? Int == 1)
                #expect((summary as? [String: Any])?["profile"] as? String == "observed")

                let (uninstallStatus, _) = try await request(
                    fixture,
                    "POST",
                    "/v1/sandbox/devices/\(deviceID)/uninstall"
                )
                #expect(uninstallStatus == 200)
                let gone = try await fixture.pushLiveActivity(
                    to: pushToStart,
                    body: Payloads.start(timestamp: fixture.nowSeconds)
                )
                #expect(gone.status == 410)
            }
        }

        @Test("Faults can be scripted over HTTP")
        func faultsOverHTTP() async throws {
            try await EmulatorFixture.with { fixture in
                let (status, _) = try await request(
                    fixture,
                    "POST",
                    "/v1/faults",
                    body:
                        #"""
                        {"action": "respond", "reason": "ServiceUnavailable", "every": 1, "endpoints": \#
                        ["channelManagement"]}
                        """#
                )
                #expect(status == 200)
                let (_, listed) = try await request(fixture, "GET", "/v1/faults")
                #expect(
                    listed as? [String] == [
                        "answer ServiceUnavailable (503) to one request in 1 of channelManagement in both environments"
                    ]
                )
                let client = try await fixture.connect(.channelManagement)
                let response = try await client.send(
                    method: "GET",
                    path: "/1/apps/\(EmulatorFixture.bundleID)/all-channels",
                    headers: [try fixture.bearer()]
                )
                #expect(response.status == 503)
                #expect(response.reason == "ServiceUnavailable")
                await client.close()
                let (cleared, _) = try await request(fixture, "DELETE", "/v1/faults")
                #expect(cleared == 200)
                #expect(fixture.emulator.faults.isEmpty)
                let (bad, _) = try await request(fixture, "POST", "/v1/faults", body: #"{"action": "explode"}"#)
                #expect(bad == 400)
            }
        }

        @Test(
            "A batch of devices registers in one call; start-counts tells each device's accepted starts and activities"
        )
        func startCounts() async throws {
            try await EmulatorFixture.with { fixture in
                let (status, registered) = try await request(
                    fixture,
                    "POST",
                    "/v1/sandbox/devices/batch",
                    body:
                        #"""
                        {"bundleID": "com.example.marquee", "iOSVersion": "17.4", "pushToStartAttributesTypes": \#
                        ["MatchAttributes"], "count": 3}
                        """#
                )
                #expect(status == 200)
                let devices = try #require(registered as? [[String: Any]])
                #expect(devices.count == 3)
                #expect(devices.allSatisfy { $0["iOSVersion"] as? String == "17.4" })
                let ids = devices.compactMap { $0["id"] as? String }
                let tokens = devices.compactMap { ($0["pushToStartTokens"] as? [String: String])?["MatchAttributes"] }
                #expect(Set(ids).count == 3 && Set(tokens).count == 3)

                // Two starts to the first device, one to the second, and one the third ignores (no alert).
                let start = Payloads.start(timestamp: fixture.nowSeconds)
                #expect(try await fixture.pushLiveActivity(to: tokens[0], body: start).status == 200)
                #expect(try await fixture.pushLiveActivity(to: tokens[0], body: start).status == 200)
                #expect(try await fixture.pushLiveActivity(to: tokens[1], body: start).status == 200)
                let withoutAlert =
                    #"""
                    {"aps":{"timestamp":1,"event":"start","attributes-type":"MatchAttributes","attributes":{},\#
                    "content-state":{}}}
                    """#
                #expect(try await fixture.pushLiveActivity(to: tokens[2], body: withoutAlert).status == 200)

                let (countsStatus, counts) = try await request(fixture, "GET", "/v1/sandbox/start-counts")
                #expect(countsStatus == 200)
                let byDevice = Dictionary(
                    uniqueKeysWithValues: (counts as? [[String: Any]] ?? []).compactMap { entry -> (String, [Int])? in
                        guard let id = entry["deviceID"] as? String, let accepted = entry["startsAccepted"] as? Int,
                            let activities = entry["activities"] as? Int
                        else { return nil }
                        return (id, [accepted, activities])
                    }
                )
                #expect(byDevice == [ids[0]: [2, 2], ids[1]: [1, 1], ids[2]: [1, 0]])
                #expect(fixture.emulator.counters.devicesStarted == 3)
                #expect(fixture.emulator.counters.devicePushesAccepted == 4)
                let (_, production) = try await request(fixture, "GET", "/v1/production/start-counts")
                #expect((production as? [Any])?.isEmpty == true)

                for count in [0, 10_001] {
                    let (refused, _) = try await request(
                        fixture,
                        "POST",
                        "/v1/sandbox/devices/batch",
                        body: #"{"bundleID": "com.example.marquee", "count": \#(count)}"#
                    )
                    #expect(refused == 400)
                }
                let (tooOld, _) = try await request(
                    fixture,
                    "POST",
                    "/v1/sandbox/devices/batch",
                    body:
                        #"""
                        {"bundleID": "com.example.marquee", "iOSVersion": "17.0", "pushToStartAttributesTypes": \#
                        ["MatchAttributes"], "count": 2}
                        """#
                )
                #expect(tooOld == 400)
                #expect(fixture.emulator.devices(in: .sandbox).count == 3)
            }
        }

        @Test("Unknown paths answer 404 with a JSON error")
        func unknownPath() async throws {
            try await EmulatorFixture.with { fixture in
                let (status, body) = try await request(fixture, "GET", "/v1/nowhere/devices")
                #expect(status == 404)
                #expect((body as? [String: String])?["error"] != nil)
            }
        }
    }

}
extension EmulatorTests {
    @Suite("emulator.json describes how to reach a running emulator")
    struct StateFileTests {
        @Test("It names every listener, the CA file and a demo key whose .p8 only its owner can read")
        func stateFile() async throws {
            let emulator = APNSEmulator()
            try await emulator.start()
            defer { Task { await emulator.shutdown() } }
            let key = try emulator.makeDemoKey(bundleID: "com.example.state")
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "marquee-state-\(UUID().uuidString)"
            )
            defer { try? FileManager.default.removeItem(at: directory) }
            try APNSEmulatorStateFile.write(emulator: emulator, demoKey: key, to: directory)

            let data = try Data(contentsOf: directory.appendingPathComponent("emulator.json"))
            let state = try JSONDecoder().decode(APNSEmulatorStateFile.self, from: data)
            #expect(state.environments["sandbox"]?.push == emulator.pushURL(.sandbox))
            #expect(
                state.environments["production"]?.channelManagementH2C
                    == emulator.channelManagementURL(.production, transport: .h2c)
            )
            #expect(state.caCertificatePath == emulator.caCertificatePath)
            let demo = try #require(state.demoKey)
            #expect(demo.keyID == key.keyID)
            let attributes = try FileManager.default.attributesOfItem(atPath: demo.p8Path)
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
            #expect(try String(contentsOfFile: demo.p8Path, encoding: .utf8).hasPrefix("-----BEGIN PRIVATE KEY-----"))
            #expect(!key.description.contains("PRIVATE"))
            await emulator.shutdown()
        }
    }

}
