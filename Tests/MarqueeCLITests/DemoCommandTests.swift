import Foundation
import MarqueeTesting
import Synchronization
import Testing

/// `marquee demo`: a whole match told in one command, on a service and emulator of its own.
@Suite("marquee demo")
struct DemoCommandTests {
    static let steps = [
        "Start the service", "Create an app", "Create the event", "Register 60 virtual devices",
        "Register push-to-start tokens",
        "Start the Live Activity", "iOS 17 apps report update tokens", "12' goal, Arsenal 1-0",
        "27' yellow card, Chelsea",
        "45+2' half time", "58' goal, Chelsea 1-1", "71' red card, Chelsea", "84' goal, Arsenal 2-1",
        "90+4' full time (end)",
        "Close the event",
    ]

    @Test("tells the match to 60 devices: each step with its time, Lock Screens, and every device's final state")
    func tellsTheMatch() async throws {
        let run = await CLI(server: nil)("demo", "--devices", "60")
        #expect(run.code == 0, "\(run)")
        let output = run.standardOutput
        let lines = output.split(separator: "\n").map(String.init)
        for step in Self.steps {
            let line = lines.first { $0.hasPrefix(step + " ") }
            #expect(line?.contains(" s ") == true, "no timed line for \(step):\n\(output)")
        }
        #expect(
            output.contains("Register 60 virtual devices")
                && output.contains("20 on iOS 17.2, 20 on iOS 17.4, 20 on iOS 18.0"),
            "\(run)"
        )
        #expect(output.contains("40 of 40 update tokens accepted"), "\(run)")
        #expect(output.contains("gone at APNs") && output.contains("answers 404"), "\(run)")

        // Lock Screens: one on the channel at half time, and one of each version at the end.
        #expect(output.contains("iOS 18.0, channel, half time"), "\(run)")
        for caption in [
            "iOS 18.0, channel, full time", "iOS 17.4, update token, full time", "iOS 17.2, update token, full time",
        ] {
            #expect(output.contains(caption), "\(run)")
        }
        #expect(output.contains("╭────") && output.contains("│ PREMIER LEAGUE"), "\(run)")
        for score in ["1 - 0", "2 - 1"] {
            #expect(
                lines.contains { $0.hasPrefix("│ Arsenal") && $0.contains(score) && $0.contains("Chelsea │") },
                "\(run)"
            )
        }

        // Every device's final state, by version and by what it displays.
        for version in ["17.2", "17.4", "18.0"] {
            #expect(lines.contains { $0.hasPrefix(version) && $0.hasSuffix("20") && $0.contains(" 20 ") }, "\(run)")
        }
        #expect(
            lines.contains { $0.hasPrefix("60 ") && $0.contains("ENDED  Arsenal 2 - 1 Chelsea  Full time 90+4'") },
            "\(run)"
        )
        #expect(
            output.contains(
                "All 60 devices ended showing the final score: ENDED  Arsenal 2 - 1 Chelsea  Full time 90+4'."
            ),
            "\(run)"
        )
    }

    @Test("--json prints the steps and every device's final state as one object")
    func json() async throws {
        let run = await CLI(server: nil)("demo", "--devices", "9", "--json")
        #expect(run.code == 0, "\(run)")
        let object = run.json
        #expect(object["devices"] as? Int == 9)
        let steps = try #require(object["steps"] as? [[String: Any]], "\(run)")
        #expect(
            steps.map { $0["step"] as? String ?? "" } == Self.steps.map { $0.replacingOccurrences(of: "60", with: "9") }
        )
        #expect(steps.allSatisfy { ($0["seconds"] as? Double ?? -1) >= 0 })
        let final = try #require(object["finalState"] as? [String: Any])
        #expect(final["everyDeviceShowsIt"] as? Bool == true)
        #expect((final["mismatches"] as? [Any])?.isEmpty == true)
        let byVersion = try #require(final["byVersion"] as? [[String: Any]])
        #expect(byVersion.map { $0["iosVersion"] as? String } == ["17.2", "17.4", "18.0"])
        #expect(byVersion.allSatisfy { $0["devices"] as? Int == 3 && $0["showingFinalState"] as? Int == 3 })
        #expect((object["lockScreens"] as? [Any])?.count == 4)
    }

    @Test("Ctrl-C stops the demo where it is: exit 130, its service shut down and its folder removed")
    func interrupted() async throws {
        // The built executable in a process of its own: only a real process gets the signal. Its
        // TMPDIR is private, so that the demo's folder can be looked for afterwards.
        let temporary = FileManager.default.temporaryDirectory.appendingPathComponent(
            "marquee-demo-signal-\(UUID().uuidString.prefix(8))"
        )
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: temporary) }
        let process = Process()
        process.executableURL = try ServeProcess.executable
        process.arguments = ["demo", "--devices", "60"]
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("MARQUEE_") }
        environment["TMPDIR"] = temporary.path
        process.environment = environment
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        let printed = Mutex("")
        let logged = Mutex("")
        output.fileHandleForReading.readabilityHandler = { handle in
            let text = String(decoding: handle.availableData, as: UTF8.self)
            printed.withLock { $0 += text }
        }
        errors.fileHandleForReading.readabilityHandler = { handle in
            let text = String(decoding: handle.availableData, as: UTF8.self)
            logged.withLock { $0 += text }
        }
        try process.run()

        // Interrupted once the service is up and the match has begun (a bound on a hang only: a
        // loaded machine may take long to get there, and an interrupt before it tests nothing).
        let begun = ContinuousClock.now
        while !printed.withLock({ $0.contains("Create an app ") }) && process.isRunning
            && ContinuousClock.now - begun < .seconds(300)
        {
            try await Task.sleep(for: .milliseconds(20))
        }
        if process.isRunning && !printed.withLock({ $0.contains("Create an app ") }) {
            Issue.record("the demo did not begin within 300 s; interrupting it anyway")
        }
        process.interrupt()
        let interrupted = ContinuousClock.now
        while process.isRunning && ContinuousClock.now - interrupted < .seconds(140) {
            try await Task.sleep(for: .milliseconds(20))
        }
        if process.isRunning {
            Issue.record("the demo did not stop within 140 s of SIGINT; killed")
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        output.fileHandleForReading.readabilityHandler = nil
        errors.fileHandleForReading.readabilityHandler = nil

        let transcript = "--- stdout\n\(printed.withLock { $0 })--- stderr\n\(logged.withLock { $0 })"
        #expect(process.terminationReason == .exit && process.terminationStatus == 130, "\(transcript)")
        #expect(logged.withLock { $0 }.contains("interrupted: the demo stopped where it was"), "\(transcript)")
        #expect(!printed.withLock { $0 }.contains("All 60 devices ended"), "\(transcript)")
        let left = try FileManager.default.contentsOfDirectory(atPath: temporary.path).filter {
            $0.hasPrefix("marquee-demo-")
        }
        #expect(left.isEmpty, "the demo's folder is still there: \(left)")
    }

    @Test(
        """
        --console keeps the service up after the match: the console's URL and a key are printed, the device wall \
        answers, Ctrl-C ends it with 0
        """
    )
    func console() async throws {
        let process = Process()
        process.executableURL = try ServeProcess.executable
        process.arguments = ["demo", "--devices", "6", "--console"]
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("MARQUEE_") }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        let printed = Mutex("")
        output.fileHandleForReading.readabilityHandler = { handle in
            let text = String(decoding: handle.availableData, as: UTF8.self)
            printed.withLock { $0 += text }
        }
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        let begun = ContinuousClock.now
        while !printed.withLock({ $0.contains("sign in ") }) && process.isRunning
            && ContinuousClock.now - begun < .seconds(120)
        {
            try await Task.sleep(for: .milliseconds(50))
        }
        let transcript = printed.withLock { $0 }
        let url = try #require(transcript.firstMatch(of: /open\s+(http:\/\/\S+)\/console/)?.1, "\(transcript)")
        let key = try #require(transcript.firstMatch(of: /sign in\s+(mq_\S+)/)?.1, "\(transcript)")
        #expect(transcript.contains("All 6 devices ended"), "\(transcript)")
        let client = TestHTTPClient(baseURL: String(url))
        #expect(try await client.send("GET", "/console").status == 200)
        let wall = try await client.send("GET", "/v1/emulator/lock-screens?environment=sandbox", key: String(key))
        let screens = try #require(wall.json["devices"] as? [[String: Any]], "\(wall.text)")
        #expect(screens.count == 6 && screens.allSatisfy { $0["status"] as? String == "ENDED" }, "\(wall.text)")
        process.interrupt()
        while process.isRunning { try await Task.sleep(for: .milliseconds(20)) }
        output.fileHandleForReading.readabilityHandler = nil
        #expect(process.terminationReason == .exit && process.terminationStatus == 0, "\(printed.withLock { $0 })")
    }

    @Test("--devices must be positive")
    func devicesValidated() async {
        let run = await CLI(server: nil)("demo", "--devices", "0")
        #expect(run.code == 2, "\(run)")
    }
}
