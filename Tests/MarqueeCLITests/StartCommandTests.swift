import Foundation
import MarqueeCore
import MarqueeEmulator
import MarqueeTesting
import Testing

/// `marquee start` and `marquee jobs`: a start on the emulator's virtual devices, followed live
/// through the job's server-sent events.
@Suite("marquee start and jobs")
struct StartCommandTests {
    static let start = [
        "--environment", "sandbox", "--attributes", #"{"homeTeam":"Arsenal","awayTeam":"Chelsea"}"#,
        "--content-state", #"{"homeScore":0,"awayScore":0}"#, "--alert-title", "Kick-off", "--alert-body",
        "Arsenal v Chelsea has started",
    ]

    /// Devices on iOS 17.4 and 18 in the emulator, their tokens imported with the CLI as a CSV file.
    static func devices(
        _ count: Int,
        server: TestServer,
        app: TestApp,
        extraTokens: [String] = []
    ) async throws -> [EmulatedDevice] {
        let emulator = try server.emulator
        var devices: [EmulatedDevice] = []
        for index in 0..<count {
            devices.append(
                try emulator.registerDevice(
                    environment: .sandbox,
                    bundleID: app.bundleID,
                    iOSVersion: index.isMultiple(of: 2) ? IOSVersion(18, 0) : IOSVersion(17, 4),
                    pushToStartAttributesTypes: ["MatchAttributes"]
                )
            )
        }
        let rows =
            devices.map { "\($0.pushToStartTokens["MatchAttributes"] ?? ""),\($0.iOSVersion.description),arsenal" }
            + extraTokens.map { "\($0),18.0,arsenal" }
        let file = try temporaryFile(
            "devices.csv",
            contents: (["token,iosVersion,tags"] + rows).joined(separator: "\n")
        )
        let imported = await server.cli(key: app.appKey)(
            "tokens",
            "import",
            file.path,
            "--environment",
            "sandbox",
            "--attributes-type",
            "MatchAttributes"
        )
        guard imported.code == 0 else { throw TestSetupError("importing the devices' tokens: \(imported)") }
        return devices
    }

    @Test(
        "start --follow shows the job's progress live and ends with its summary; every device shows the activity once",
        arguments: TestBackend.allCases
    )
    func startAndFollow(backend: TestBackend) async throws {
        try await TestServer.run(backend) { server in
            let app = try await server.makeApp()
            #expect(try await server.putEvent(app, key: "match").status == 201)
            _ = try await Self.devices(40, server: server, app: app)

            var marquee = server.cli(key: app.publisherKey)
            marquee.standardErrorIsTerminal = true
            let run = await marquee.run(["start", "match"] + Self.start)
            #expect(run.code == 0, "\(run)")
            #expect(run.standardError.hasPrefix("Started job job_"), "\(run)")
            #expect(run.standardError.contains("100%") && run.standardError.contains("sent 40 / 40"), "\(run)")
            #expect(run.standardOutput.contains("succeeded: 40 sent, 40 accepted, 0 failed"), "\(run)")

            let activities = try server.emulator.activities(in: .sandbox)
            #expect(activities.count == 40, "warnings:\n\(server.warnings.lines.joined(separator: "\n"))")
            #expect(Set(activities.map(\.deviceID)).count == 40)
        }
    }

    @Test(
        """
        start without --follow prints the job; jobs list, show and follow read it; a token APNs refuses makes \
        follow exit 7; a finished job cannot be cancelled, nor its uncertain starts resent when it has none
        """,
        arguments: TestBackend.allCases
    )
    func jobs(backend: TestBackend) async throws {
        try await TestServer.run(backend) { server in
            let app = try await server.makeApp()
            #expect(try await server.putEvent(app, key: "match").status == 201)
            // A well-formed token no device has: APNs refuses it.
            _ = try await Self.devices(6, server: server, app: app, extraTokens: [String(format: "%064x", 7)])

            let marquee = server.cli(key: app.publisherKey)
            let started = await marquee.run(["start", "match", "--tag", "arsenal", "--json"] + Self.start)
            #expect(started.code == 0, "\(started)")
            let jobID = try #require(started.json["id"] as? String)
            #expect(jobID.hasPrefix("job_"))

            let followed = await marquee("jobs", "follow", jobID)
            #expect(followed.code == 7, "\(followed)")
            #expect(
                followed.standardOutput.contains("Job \(jobID) succeeded: 7 sent, 6 accepted, 1 failed"),
                "\(followed)"
            )

            let shown = await marquee("jobs", "show", jobID, "--json")
            #expect(shown.json["state"] as? String == "succeeded")
            let human = await marquee("jobs", "show", jobID)
            #expect(human.standardOutput.contains("OUTCOME"), "the failures by outcome and reason: \(human)")

            let listed = await marquee("jobs", "list")
            #expect(listed.code == 0 && listed.standardOutput.contains(jobID), "\(listed)")
            #expect(listed.standardOutput.contains("UNCERTAIN"), "\(listed)")

            // Every start was answered: nothing to resend, and the problem says so.
            let resend = await marquee("jobs", "resend-uncertain", jobID)
            #expect(resend.code == 5, "\(resend)")
            #expect(resend.standardError.contains("no uncertain tokens"), "\(resend)")

            let cancel = await marquee("jobs", "cancel", jobID)
            #expect(cancel.code == 5, "\(cancel)")
            #expect(await marquee("jobs", "show", "job_00000000000000000000000000000000").code == 4)
        }
    }

    /// The confirm policy (the default) with one stream per APNs connection, so that a reset cuts
    /// off exactly the start it answers, and a window of 2 s: tokens imported from a file have no
    /// device token, so their apps cannot be asked and the window decides them.
    static let confirming = [
        "apns.connections": "2",
        "apns.streamsPerConnection": "1",
        "jobs.pollMilliseconds": "100",
        "jobs.confirmation.graceSeconds": "0",
        "jobs.confirmation.windowSeconds": "2",
        "jobs.maxAttemptsPerToken": "1000",
        "jobs.retryBaseMilliseconds": "50",
        "jobs.retryMaxMilliseconds": "200",
    ]

    @Test(
        """
        jobs follow and show print what the confirmation did with a start's uncertain devices, and the resend \
        hint names only those it left uncertain
        """,
        arguments: TestBackend.allCases
    )
    func confirmation(backend: TestBackend) async throws {
        try await TestServer.run(backend, settings: Self.confirming) { server in
            let app = try await server.makeApp()
            #expect(try await server.putEvent(app, key: "match").status == 201)
            _ = try await Self.devices(6, server: server, app: app)
            // The first 2 starts are reset before APNs processes them: uncertain, and not there.
            try server.emulator.injectFault(.init(.resetConnection, rate: .first(2), endpoints: [.devicePush]))

            let marquee = server.cli(key: app.publisherKey)
            let started = await marquee.run(["start", "match", "--tag", "arsenal", "--json"] + Self.start)
            let jobID = try #require(started.json["id"] as? String, "\(started)")
            let followed = await marquee("jobs", "follow", jobID)
            #expect(followed.code == 7, "\(followed)")
            #expect(followed.standardOutput.contains("2 uncertain"), "\(followed)")
            #expect(
                followed.standardOutput.contains("\nconfirmation: "),
                "the summary says what the confirmation did so far: \(followed)"
            )

            try await server.poll(
                "/v1/jobs/\(jobID)",
                key: app.publisherKey,
                "the confirmation deciding both uncertain devices"
            ) { job in
                let confirmation = job["confirmation"] as? [String: Any]
                return confirmation?["waiting"] as? Int == 0 && confirmation?["uncertain"] as? Int == 2
            }
            let shown = await marquee("jobs", "show", jobID)
            #expect(shown.code == 0, "\(shown)")
            let line = shown.standardOutput.split(separator: "\n").first { $0.hasPrefix("Confirmation") }
            #expect(
                line?.hasSuffix("  0 asked, 0 confirmed, 0 restarted, 0 ended, 2 uncertain, 0 waiting") == true,
                "\(shown)"
            )
            // Nobody could be asked: the two stay uncertain, and only they are worth a resend.
            #expect(shown.standardOutput.contains("2 starts got no answer from APNs"), "\(shown)")
            #expect(shown.standardOutput.contains("marquee jobs resend-uncertain \(jobID)"), "\(shown)")
            #expect(!shown.standardOutput.contains("undecided"), "\(shown)")
            let json = await marquee("jobs", "show", jobID, "--json")
            #expect((json.json["confirmation"] as? [String: Any])?["uncertain"] as? Int == 2, "\(json)")
        }
    }
}
