import Crypto
import Foundation
import MarqueeCore
import MarqueeEmulator
import MarqueeTesting
import Testing

/// Rotating an app's signing key while its start fan-out runs: the run finishes on the client it
/// holds, new work gets a client for the new key, and no device is started twice or left out.
@Suite("Signing key rotation during a fan-out")
struct SigningKeyRotationFanOutTests {
    @Test(
        "a signing key installed in the middle of a start fan-out loses and duplicates nothing",
        arguments: TestBackend.allCases
    )
    func rotationMidFanOut(backend: TestBackend) async throws {
        let settings = StartFanOutAPITests.patientRetries.merging(["jobs.pageSize": "25", "jobs.batchSize": "20"]) {
            _,
            new in new
        }
        try await TestServer.run(backend, settings: settings) { server in
            let emulator = try server.emulator
            let app = try await server.makeApp()
            #expect(try await server.putEvent(app, key: "match").status == 201)
            let devices = try await StartFanOutAPITests.devices(300, emulator: emulator, server: server, app: app)

            // A pause point: 100 starts go through, every later one is answered "try later" until
            // the faults are removed, so the fan-out is known to be mid-run, with sends in flight
            // and waiting to retry, when the key changes.
            StartFanOutAPITests.holdBack(after: 100, emulator)
            let started = try await server.client.send(
                "POST",
                "/v1/events/match/starts",
                key: app.publisherKey,
                json: StartFanOutAPITests.startBody
            )
            let location = try #require(started.header("Location"))
            let midway = try await StartFanOutAPITests.waitForJob(server, app, location) {
                (StartFanOutAPITests.progress($0, "accepted") ?? 0) >= 100
            }
            #expect(midway["state"] as? String == "running")

            // The operator installs a new .p8, then new work asks for the app's client (an event's
            // channel is created at APNs): the registry replaces the client the run is holding.
            let newKeyID =
                "KEY" + String(UUID().uuidString.prefix(7)).uppercased().replacingOccurrences(of: "-", with: "0")
            let installed = try await server.client.send(
                "PUT",
                "/v1/apps/\(app.id)/signing-key",
                key: server.deploymentKey,
                json: ["keyID": newKeyID, "privateKey": P256.Signing.PrivateKey().pemRepresentation]
            )
            #expect(installed.status == 200, "\(installed.text)")
            #expect(try await server.putEvent(app, key: "second-match").status == 201)

            emulator.removeAllFaults()
            let job = try await StartFanOutAPITests.waitForJob(server, app, location)
            #expect(
                job["state"] as? String == "succeeded",
                "job: \(job)\nwarnings:\n\(server.warnings.lines.joined(separator: "\n"))"
            )
            #expect(StartFanOutAPITests.progress(job, "accepted") == devices.count)
            #expect(StartFanOutAPITests.progress(job, "failed") == 0)

            // Counted at the emulator: every device shows the activity exactly once.
            let byDevice = Dictionary(grouping: emulator.activities(in: .sandbox), by: \.deviceID)
            let repeated = byDevice.filter { $0.value.count > 1 }.keys.sorted()
            let missing = devices.filter { byDevice[$0.id] == nil }.map(\.id)
            #expect(repeated.isEmpty, "started more than once: \(repeated)")
            #expect(missing.isEmpty, "never started: \(missing)")
        }
    }
}
