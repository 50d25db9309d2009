import Foundation
import Logging
import MarqueeCore
import MarqueeEmulator
import MarqueeServer
import Testing

/// `marquee emulator` reads its keys as `marquee serve` does: flags over the environment over a
/// JSON file over defaults, each bad value refused by its key (docs/configuration.md).
@Suite("Emulator settings")
struct EmulatorSettingsTests {
    @Test(
        """
        with no keys the emulator is the documented default: observed profile, TLS and h2c, Apple's budgets, no \
        played app
        """
    )
    func defaults() throws {
        let settings = try EmulatorSettings.reading([:], environment: false)
        #expect(settings.emulator.profile == .observed)
        #expect(settings.emulator.host == "127.0.0.1")
        #expect(settings.emulator.h2c)
        guard case .generated = settings.emulator.tls else {
            Issue.record("expected a generated TLS certificate by default")
            return
        }
        #expect(settings.emulator.ports.isEmpty)
        #expect(settings.emulator.maxConcurrentStreams == 1000)
        #expect(settings.emulator.pushToStartBudget == 10)
        #expect(settings.emulator.priorityTenBudgetPerHour == 40)
        #expect(settings.emulator.broadcastBudgetPerHour.isEmpty)
        #expect(settings.emulator.broadcastThrottle == nil)
        #expect(settings.emulator.idleTimeout == nil)
        #expect(settings.emulator.apps.isEmpty)
        #expect(settings.demoTeamID == APNSEmulator.defaultDemoTeamID)
        #expect(settings.demoBundleID == APNSEmulator.defaultDemoBundleID)
        #expect(settings.faults.isEmpty)
        #expect(settings.logLevel == .info)
    }

    @Test("listeners, budgets and the played app's devices come from their keys; 0 budgets are unlimited")
    func keys() throws {
        let settings = try EmulatorSettings.reading(
            [
                "emulator.profile": "documented",
                "emulator.ports": "sandbox-push-h2c=8080, production-channelManagement-tls=2196",
                "emulator.tls": "false",
                "emulator.pushToStartBudget": "0",
                "emulator.broadcastBudgetStored": "7",
                "emulator.broadcastThrottleSeconds": "1.5",
                "emulator.idleTimeoutSeconds": "30",
                "emulator.offlineShare": "0.25",
                "emulator.wakeWithinSeconds": "3",
                "emulator.seed": "42",
            ],
            environment: false
        )
        #expect(settings.emulator.profile == .documented)
        #expect(settings.emulator.ports[.init(environment: .sandbox, kind: .push, transport: .h2c)] == 8080)
        #expect(
            settings.emulator.ports[.init(environment: .production, kind: .channelManagement, transport: .tls)] == 2196
        )
        guard case .disabled = settings.emulator.tls else {
            Issue.record("expected emulator.tls false to disable TLS")
            return
        }
        #expect(settings.emulator.pushToStartBudget == nil)
        #expect(settings.emulator.broadcastBudgetPerHour == [.mostRecentMessageStored: 7])
        #expect(settings.emulator.broadcastThrottle != nil)
        #expect(settings.emulator.idleTimeout == .seconds(30))
        #expect(settings.emulator.appShares.offlineAtRegistration == 0.25)
        #expect(settings.emulator.appShares.wakeWithin == .seconds(3))
        #expect(settings.emulator.appShares.seed == 42)
    }

    @Test("faults are a JSON array of what POST /v1/faults takes; anything else is refused naming emulator.faults")
    func faults() throws {
        let settings = try EmulatorSettings.reading(
            [
                "emulator.faults":
                    #"""
                [{"action":"respond","reason":"TooManyRequests","probability":0.1},{"action":"respond",\#
                "reason":"ServiceUnavailable","every":3}]
                """#
            ],
            environment: false
        )
        #expect(settings.faults.count == 2)
        for bad in [#"{"action":"respond"}"#, "[not json]", #"[{"action":"explode"}]"#] {
            #expect {
                try EmulatorSettings.reading(["emulator.faults": bad], environment: false)
            } throws: { error in
                (error as? ConfigurationError)?.key == "emulator.faults"
            }
        }
    }

    @Test("a bad value is refused by its key: ports, shares, profile")
    func refusals() throws {
        for (key, value) in [
            ("emulator.ports", "sandbox-push=8080"), ("emulator.ports", "sandbox-push-h2c=70000"),
            ("emulator.answerShare", "1.5"), ("emulator.profile", "guessed"), ("emulator.idleTimeoutSeconds", "-1"),
        ] {
            #expect {
                try EmulatorSettings.reading([key: value], environment: false)
            } throws: { error in
                (error as? ConfigurationError)?.key == key
            }
        }
    }

    @Test("the played app needs its app-role key, a secret that never appears in an error")
    func playedApp() throws {
        #expect {
            try EmulatorSettings.reading(["emulator.marqueeURL": "http://127.0.0.1:8080"], environment: false)
        } throws: { error in
            (error as? ConfigurationError)?.key == "emulator.appKey"
        }
        let secret = "mq_app_secret_never_shown"
        let settings = try EmulatorSettings.reading(
            [
                "emulator.marqueeURL": "http://127.0.0.1:8080", "emulator.appKey": secret,
                "emulator.attributesType": "MatchAttributes",
            ],
            environment: false
        )
        let app = try #require(settings.emulator.apps[settings.demoBundleID])
        #expect(app.appKey == secret)
        #expect(app.attributesType == "MatchAttributes")
        #expect {
            try EmulatorSettings.reading(
                ["emulator.marqueeURL": "ftp://x", "emulator.appKey": secret],
                environment: false
            )
        } throws: { error in
            guard let error = error as? ConfigurationError else { return false }
            return error.key == "emulator.marqueeURL" && !error.description.contains(secret)
        }
    }

    @Test("a flag wins over the JSON file, and the file over the defaults")
    func precedence() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("emulator-\(UUID().uuidString).json")
        try Data(#"{"emulator": {"host": "0.0.0.0", "history": 7, "bundleID": "com.example.file"}}"#.utf8).write(
            to: file
        )
        defer { try? FileManager.default.removeItem(at: file) }
        let settings = try await EmulatorSettings.load(flags: ["emulator.host": "127.0.0.2"], file: file.path)
        #expect(settings.emulator.host == "127.0.0.2")
        #expect(settings.emulator.historyPerTarget == 7)
        #expect(settings.demoBundleID == "com.example.file")
    }
}
