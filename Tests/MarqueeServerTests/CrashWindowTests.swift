import Foundation
import MarqueeCore
import MarqueeEmulator
import MarqueeTesting
import Testing

@testable import MarqueeServer

/// A replica killed in the middle of a start fan-out leaves a small, named crash window: the tokens
/// it had handed to APNs without a committed outcome. The replica that resumes the part records them
/// as uncertain (`jobs.uncertainStarts=skip`, and likewise `confirm`, the default) and sends none
/// of them again.
@Suite("Crash window")
struct CrashWindowTests {
    @Test(
        "a part resumed after a SIGKILL marks its reserved, unsettled tokens uncertain and starts no device twice",
        arguments: TestBackend.allCases
    )
    func resumedAfterKill(backend: TestBackend) async throws {
        let audience = 200
        let answered = 40
        let emulator = APNSEmulator()
        try await emulator.start()
        defer { Task { await emulator.shutdown() } }
        let settings = [
            "jobs.partitions": "1",
            "jobs.pageSize": "20",
            "jobs.window": "10",
            // The killed replica's lease lapses soon, so the second one takes the part over.
            "jobs.leaseMilliseconds": "1500",
            "jobs.pollMilliseconds": "100",
            "jobs.uncertainStarts": "skip",
        ].merging(try emulator.customTargetSettings()) { _, new in new }
        try await TestServer.withDatabase(backend) { database in
            let app = try await TestServer.run(on: database, settings: settings) { server in
                let app = try await server.makeApp()
                try emulator.register(app)
                #expect(try await server.putEvent(app, key: "final").status == 201)
                _ = try await StartFanOutAPITests.devices(audience, emulator: emulator, server: server, app: app)
                return app
            }

            // The pause point: the first 40 starts are answered, every later one is held without an
            // answer, so the first replica has a window of sends written and unanswered when it dies.
            emulator.injectFault(
                APNSEmulatorFault(
                    .delay(.seconds(3600), jitter: .zero),
                    rate: .afterFirst(answered),
                    endpoints: [.devicePush]
                )
            )
            let first = try await ServeProcess.start(on: database, settings: settings)
            let client = TestHTTPClient(baseURL: first.baseURL)
            let started = try await client.send(
                "POST",
                "/v1/events/final/starts",
                key: app.publisherKey,
                json: StartFanOutAPITests.startBody
            )
            #expect(started.status == 202)
            let location = try #require(started.header("Location"))
            // Until the 40 answered starts are committed (within the commit interval).
            var job: [String: Any] = [:]
            let committedBy = Date().addingTimeInterval(120)
            while Date() < committedBy {
                job = try await client.send("GET", location, key: app.publisherKey).json
                if StartFanOutAPITests.progress(job, "accepted") == answered { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(StartFanOutAPITests.progress(job, "accepted") == answered, "\(job)")
            await first.kill()
            emulator.removeAllFaults()

            let second = try await ServeProcess.start(on: database, settings: settings)
            let resumed = TestHTTPClient(baseURL: second.baseURL)
            let finishedBy = Date().addingTimeInterval(300)
            while Date() < finishedBy {
                job = try await resumed.send("GET", location, key: app.publisherKey).json
                if ["succeeded", "failed", "cancelled"].contains(job["state"] as? String ?? "") { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            await second.stop()
            #expect(job["state"] as? String == "succeeded", "\(job)\n\(second.logText)")

            // Read the part's progress from the store: accepted and uncertain account for every token.
            let parentID = try #require(location.split(separator: "/").last.flatMap { PublicID.parseJob(String($0)) })
            let appID = try #require(PublicID.parseApp(app.id))
            let parts = try await TestServer.run(on: database, settings: settings) { server in
                try await server.store.childJobs(appID: appID, parentID: parentID)
            }
            let progress = parts.map(\.progress).reduce(JobProgress(), +)
            #expect(progress.attempted == Int64(audience))
            #expect(progress.succeeded + progress.uncertain == Int64(audience), "\(progress)")
            // At least the window held unanswered when the replica died is uncertain.
            #expect(progress.uncertain >= 10, "\(progress)")
            #expect(parts.allSatisfy { $0.attempts >= 2 && $0.reservedThrough != nil })

            // Counted at the emulator: no device started twice, and those without a start are among
            // the uncertain ones (never more).
            let activities = emulator.activities(in: .sandbox)
            let perDevice = Dictionary(grouping: activities, by: \.deviceID).mapValues(\.count)
            #expect(
                perDevice.values.allSatisfy { $0 == 1 },
                "devices started twice: \(perDevice.filter { $0.value > 1 }.count)"
            )
            let withoutStart = Int64(audience - perDevice.count)
            #expect(
                withoutStart <= progress.uncertain,
                "\(withoutStart) devices without a start, \(progress.uncertain) uncertain"
            )
            #expect(Int64(perDevice.count) >= progress.succeeded)
        }
    }
}
