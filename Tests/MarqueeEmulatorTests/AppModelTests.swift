import Foundation
import MarqueeCore
import MarqueeEmulator
import MarqueeKit
import NIOHTTP1
import Testing

extension EmulatorTests {
    /// The emulator plays the app: its virtual devices report to a Marquee (here a recording HTTP
    /// server) with MarqueeKit's census, requests and URLSession transport.
    @Suite("App model: virtual devices report presence to Marquee as MarqueeKit decides")
    struct AppModelTests {
        static let appKey = "mk_app_secret_never_logged"

        /// Runs `body` with an emulator whose app reports to a fresh recording Marquee. The start
        /// payloads carry the event key in `attributes.matchId` (`"m1"`).
        private func withPlayedApp(
            _ adjust: @escaping (inout EmulatedAppShares) -> Void = { _ in },
            _ body: (EmulatorFixture, RecordingMarquee) async throws -> Void
        ) async throws {
            let marquee = try await RecordingMarquee.start()
            do {
                try await EmulatorFixture.with({ configuration in
                    configuration.apps[EmulatorFixture.bundleID] = EmulatedAppMarquee(
                        baseURL: marquee.baseURL,
                        appKey: Self.appKey,
                        attributesType: "MatchAttributes",
                        eventKeyAttribute: "matchId"
                    )
                    var shares = EmulatedAppShares()
                    shares.reportDelay = .seconds(2)
                    shares.wakeWithin = .seconds(10)
                    adjust(&shares)
                    configuration.appShares = shares
                }) { fixture in
                    try await body(fixture, marquee)
                }
            } catch {
                await marquee.stop()
                throw error
            }
            await marquee.stop()
        }

        private func register(_ fixture: EmulatorFixture) throws -> EmulatedDevice {
            try fixture.emulator.registerDevice(
                environment: .sandbox,
                bundleID: EmulatorFixture.bundleID,
                pushToStartAttributesTypes: ["MatchAttributes"]
            )
        }

        private func start(_ fixture: EmulatorFixture, _ device: EmulatedDevice) async throws {
            let token = try #require(device.pushToStartTokens["MatchAttributes"])
            let response = try await fixture.pushLiveActivity(
                to: token,
                body: Payloads.start(timestamp: fixture.nowSeconds, inputPushToken: true)
            )
            #expect(response.status == 200)
        }

        /// Marquee's background push to the app's device token, asking about `events`.
        private func ask(_ fixture: EmulatorFixture, _ device: EmulatedDevice, about events: [String]) async throws {
            let list = events.map { #"{"eventKey":"\#($0)","environment":"sandbox"}"# }.joined(separator: ",")
            let client = try await fixture.connect()
            defer { Task { await client.close() } }
            let response = try await client.send(
                path: "/3/device/\(device.deviceToken)",
                headers: [
                    try fixture.bearer(), ("apns-push-type", "background"), ("apns-topic", EmulatorFixture.bundleID),
                    ("apns-priority", "5"),
                ],
                body: #"{"aps":{"content-available":1},"marquee":{"ask":"presence","events":[\#(list)]}}"#
            )
            #expect(response.status == 200)
        }

        /// Waits until `count` wakes were scheduled, moves the clock past them, and waits until
        /// they have played.
        private func play(
            _ fixture: EmulatorFixture,
            scheduled count: Int,
            advancing seconds: TimeInterval
        ) async throws {
            let before = await fixture.emulator.appWakesPlayed
            try await eventually("\(count) wakes scheduled") { await fixture.emulator.pendingAppWakes == count }
            fixture.clock.advance(by: seconds)
            try await eventually("\(count) wakes played") { await fixture.emulator.appWakesPlayed == before + count }
        }

        @Test("A started device reports showing once, with its activity's ID, after the report delay")
        func startedDeviceReportsShowing() async throws {
            try await withPlayedApp { fixture, marquee in
                let device = try register(fixture)
                try await start(fixture, device)
                try await eventually("the start's wake scheduled") { await fixture.emulator.pendingAppWakes == 1 }
                fixture.clock.advance(by: 1)
                await Task.yield()
                #expect(marquee.requests.isEmpty, "nothing before the report delay")
                try await play(fixture, scheduled: 1, advancing: 1)

                let activity = try #require(fixture.emulator.activities(in: .sandbox).first)
                let token = try #require(device.pushToStartTokens["MatchAttributes"])
                let reports = marquee.requests
                #expect(reports.count == 1)
                let report = try #require(reports.first)
                #expect(report.method == "PUT")
                #expect(report.path == "/v1/events/m1/presence/\(token)")
                #expect(report.authorization == "Bearer \(Self.appKey)")
                #expect(report.json == ["environment": "sandbox", "state": "showing", "activityID": activity.id])

                // An update changes nothing the app reports: showing was said once.
                let updateToken = try #require(activity.updateToken)
                let update = try await fixture.pushLiveActivity(
                    to: updateToken,
                    body: Payloads.update(score: "1-0", timestamp: fixture.nowSeconds)
                )
                #expect(update.status == 200)
                try await play(fixture, scheduled: 1, advancing: 2)
                #expect(marquee.requests.count == 1)

                // An end is reported as ended.
                let end = try await fixture.pushLiveActivity(
                    to: updateToken,
                    body: Payloads.end(score: "1-0", timestamp: fixture.nowSeconds)
                )
                #expect(end.status == 200)
                try await play(fixture, scheduled: 1, advancing: 2)
                #expect(marquee.requests.map { $0.json["state"] } == ["showing", "ended"])
            }
        }

        @Test(
            """
            Marquee's background push: an answering device reports showing for its event and absent for one it \
            has no activity of
            """
        )
        func backgroundPushAnswered() async throws {
            try await withPlayedApp { fixture, marquee in
                let device = try register(fixture)
                try await start(fixture, device)
                try await play(fixture, scheduled: 1, advancing: 2)
                let traits = try #require(fixture.emulator.device(id: device.id, in: .sandbox)?.appTraits)
                let wake = try #require(traits.wakeDelaySeconds)
                #expect((0...10).contains(wake))

                try await ask(fixture, device, about: ["m1", "m2"])
                try await play(fixture, scheduled: 1, advancing: 10)
                let answers = marquee.requests.dropFirst().map { ($0.path.split(separator: "/")[2], $0.json["state"]) }
                #expect(answers.map(\.0) == ["m1", "m2"])
                #expect(answers.map(\.1) == ["showing", "absent"])
            }
        }

        @Test("A device whose app never reports says nothing, started, asked or launched")
        func neverReporting() async throws {
            try await withPlayedApp({ $0.neverReports = 1 }) { fixture, marquee in
                let device = try register(fixture)
                #expect(fixture.emulator.device(id: device.id, in: .sandbox)?.appTraits?.neverReports == true)
                try await start(fixture, device)
                try await ask(fixture, device, about: ["m1"])
                try fixture.emulator.launchApp(environment: .sandbox, deviceID: device.id, liveEvents: ["m1"])
                fixture.clock.advance(by: 60)
                #expect(await fixture.emulator.pendingAppWakes == 0)
                #expect(await fixture.emulator.appWakesPlayed == 0)
                #expect(marquee.requests.isEmpty)
                // The start itself reached the device: APNs' side is as for any device.
                #expect(fixture.emulator.activities(in: .sandbox).count == 1)
            }
        }

        @Test("With Live Activities off a start is answered 200, nothing shows, and the app reports absent")
        func liveActivitiesOff() async throws {
            try await withPlayedApp({ $0.liveActivitiesOff = 1 }) { fixture, marquee in
                let device = try register(fixture)
                let registered = try #require(fixture.emulator.device(id: device.id, in: .sandbox))
                #expect(!registered.areLiveActivitiesEnabled)
                #expect(registered.appTraits?.liveActivitiesOff == true)
                try await start(fixture, device)
                try await play(fixture, scheduled: 1, advancing: 2)
                #expect(fixture.emulator.activities(in: .sandbox).isEmpty)
                #expect(marquee.requests.map(\.json) == [["environment": "sandbox", "state": "absent"]])
            }
        }

        @Test("A launched app reports absent for a live event it has no activity of")
        func launchedWithoutActivity() async throws {
            try await withPlayedApp { fixture, marquee in
                let device = try register(fixture)
                try fixture.emulator.launchApp(environment: .sandbox, deviceID: device.id, liveEvents: ["m9"])
                try await eventually("the launch reported") { marquee.requests.count == 1 }
                #expect(marquee.requests.first?.path.hasPrefix("/v1/events/m9/presence/") == true)
                #expect(marquee.requests.first?.json["state"] == "absent")
            }
        }

        @Test("A report Marquee leaves unanswered holds up its own device's app, no other device's")
        func unansweredReportHoldsUpNoOtherDevice() async throws {
            try await withPlayedApp { fixture, marquee in
                let waiting = try register(fixture)
                let other = try register(fixture)
                marquee.holdAnswers(toPathsContaining: "/v1/events/held/")
                try fixture.emulator.launchApp(environment: .sandbox, deviceID: waiting.id, liveEvents: ["held"])
                try await eventually("the first device's report taken, its answer held") { marquee.requests.count == 1 }

                try fixture.emulator.launchApp(environment: .sandbox, deviceID: other.id, liveEvents: ["m9"])
                try await eventually("the other device's wake played while the first's report waits") {
                    await fixture.emulator.appWakesPlayed == 1
                }
                #expect(marquee.requests.map(\.path).last?.hasPrefix("/v1/events/m9/presence/") == true)

                marquee.releaseHeld()
                try await eventually("the first device's wake played once answered") {
                    await fixture.emulator.appWakesPlayed == 2
                }
            }
        }

        @Test(
            """
            Shares are drawn per device from the seed: exact counts for seed 7, the same devices again with the \
            same seed
            """
        )
        func seededShares() async throws {
            func population() async throws -> [EmulatedAppTraits] {
                var result: [EmulatedAppTraits] = []
                try await withPlayedApp({ shares in
                    shares.neverReports = 0.1
                    shares.offlineAtRegistration = 0.2
                    shares.liveActivitiesOff = 0.3
                    shares.answersBackgroundPush = 0.9
                    shares.seed = 7
                }) { fixture, _ in
                    let devices = try fixture.emulator.registerDevices(
                        count: 1000,
                        environment: .sandbox,
                        bundleID: EmulatorFixture.bundleID,
                        pushToStartAttributesTypes: ["MatchAttributes"]
                    )
                    #expect(devices.filter { !$0.isOnline }.count == 210)
                    #expect(devices.filter { !$0.areLiveActivitiesEnabled }.count == 292)
                    let traits = devices.compactMap(\.appTraits)
                    #expect(traits.count == 1000)
                    #expect(traits.filter(\.neverReports).count == 92)
                    #expect(traits.filter(\.offlineAtRegistration).count == 210)
                    #expect(traits.filter(\.liveActivitiesOff).count == 292)
                    #expect(traits.filter(\.answersBackgroundPush).count == 830)
                    result = traits
                }
                return result
            }
            let first = try await population()
            let second = try await population()
            #expect(first == second)
        }

        @Test(
            """
            A device offline at registration: APNs holds Marquee's background push; back online, the app wakes \
            and answers
            """
        )
        func offlineDeviceAnswersWhenBack() async throws {
            try await withPlayedApp({ $0.offlineAtRegistration = 1 }) { fixture, marquee in
                let device = try register(fixture)
                #expect(fixture.emulator.device(id: device.id, in: .sandbox)?.isOnline == false)
                try await ask(fixture, device, about: ["m1"])
                fixture.clock.advance(by: 60)
                #expect(await fixture.emulator.pendingAppWakes == 0, "an offline device does not wake")
                try fixture.emulator.setDeviceOnline(true, environment: .sandbox, deviceID: device.id)
                try await play(fixture, scheduled: 1, advancing: 10)
                #expect(marquee.requests.map { $0.json["state"] } == ["absent"])
            }
        }

        @Test(
            """
            Through the inspection API: an app is connected (its key never shown), a device's traits read, the \
            app launched
            """
        )
        func inspectionAPI() async throws {
            let marquee = try await RecordingMarquee.start()
            defer { Task { await marquee.stop() } }
            try await EmulatorFixture.with { fixture in
                let connect =
                    #"""
                    {"baseURL":"\#(marquee.baseURL.absoluteString)","appKey":"\#(Self.appKey)",\#
                    "eventKeyAttribute":"matchId"}
                    """#
                let (status, connected) = try await fixture.inspect(
                    "PUT",
                    "/v1/apps/\(EmulatorFixture.bundleID)/marquee",
                    body: connect
                )
                #expect(status == 200)
                let (_, apps) = try await fixture.inspect("GET", "/v1/apps")
                for body in [connected, apps] {
                    let text = String(decoding: body, as: UTF8.self)
                    #expect(text.contains(marquee.baseURL.absoluteString))
                    #expect(!text.contains(Self.appKey))
                }
                #expect(!String(describing: fixture.emulator.connectedApps).contains(Self.appKey))

                let device = try register(fixture)
                let (_, shown) = try await fixture.inspect("GET", "/v1/sandbox/devices/\(device.id)")
                let traits = try JSONDecoder().decode(EmulatedDevice.self, from: shown).appTraits
                #expect(traits == fixture.emulator.device(id: device.id, in: .sandbox)?.appTraits)
                #expect(traits?.neverReports == false)

                let (launched, _) = try await fixture.inspect(
                    "POST",
                    "/v1/sandbox/devices/\(device.id)/launch",
                    body: #"{"liveEvents":["m7"]}"#
                )
                #expect(launched == 200)
                try await eventually("the launch reported") { marquee.requests.count == 1 }
                #expect(marquee.requests.first?.path.hasPrefix("/v1/events/m7/presence/") == true)
                #expect(marquee.requests.first?.authorization == "Bearer \(Self.appKey)")
            }
        }

        @Test(
            """
            A report Marquee did not take (503) is sent again after MarqueeKit's retry wait; one it refused (422) \
            is not
            """
        )
        func failedReportIsRetried() async throws {
            try await withPlayedApp { fixture, marquee in
                let device = try register(fixture)
                marquee.answer(.serviceUnavailable)
                try await start(fixture, device)
                try await play(fixture, scheduled: 1, advancing: 2)
                #expect(marquee.requests.map { $0.json["state"] } == ["showing"])

                // RetryPolicy's first wait: 1 s and up to 1 s of jitter. Then Marquee takes it.
                marquee.answer(.noContent)
                try await play(fixture, scheduled: 1, advancing: 2)
                #expect(marquee.requests.map { $0.json["state"] } == ["showing", "showing"])
                #expect(await fixture.emulator.pendingAppWakes == 0, "taken: nothing more to send")

                // A refusal time cannot mend is not sent again.
                marquee.answer(.unprocessableEntity)
                try await ask(fixture, device, about: ["m2"])
                try await play(fixture, scheduled: 1, advancing: 10)
                #expect(marquee.requests.count == 3)
                fixture.clock.advance(by: 60)
                #expect(await fixture.emulator.pendingAppWakes == 0)
            }
        }

        @Test("Shutdown drops the reports still waiting for their delay")
        func shutdownStopsPendingReports() async throws {
            try await withPlayedApp { fixture, marquee in
                let device = try register(fixture)
                try await start(fixture, device)
                try await eventually("the start's wake scheduled") { await fixture.emulator.pendingAppWakes == 1 }
                await fixture.emulator.shutdown()
                #expect(await fixture.emulator.pendingAppWakes == 0)
                fixture.clock.advance(by: 60)
                #expect(await fixture.emulator.appWakesPlayed == 0)
                #expect(marquee.requests.isEmpty)
            }
        }
    }
}
