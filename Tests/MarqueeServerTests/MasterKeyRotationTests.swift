import MarqueeServer
import MarqueeStorage
import MarqueeTesting
import Testing

/// Rotating the master key that seals APNs signing keys, as the README's runbook tells it: put the
/// new key first and keep the old one after it, start (every signing key is sealed again under the
/// new key), then drop the old key.
@Suite("Master key rotation")
struct MasterKeyRotationTests {
    @Test(
        "a start with the new key first re-seals every signing key, so the old key can then go",
        arguments: TestBackend.allCases
    )
    func rotation(backend: TestBackend) async throws {
        try await TestServer.withDatabase(backend) { database in
            let old = database.masterKeys
            let new = "rotated-2:\(MasterKey.generateBase64())"
            let app = try await TestServer.run(on: database) { server in try await server.makeApp() }

            // The old key dropped too early: the start stops, naming the key to put back.
            await #expect {
                try await TestServer.run(on: database, settings: ["secrets.masterKeys": new]) { _ in }
            } throws: { error in
                guard let error = error as? ConfigurationError else { return false }
                return error.key == "secrets.masterKeys" && error.problem.contains("test-1")
                    && !error.problem.contains(old.split(separator: ":")[1])
            }

            try await TestServer.run(on: database, settings: ["secrets.masterKeys": "\(new),\(old)"]) { _ in }

            try await TestServer.run(on: database, settings: ["secrets.masterKeys": new]) { server in
                // Creating the event's channel signs a request to APNs with the re-sealed key.
                let event = try await server.putEvent(app, key: "after-rotation")
                #expect(event.status == 201, "\(event.text)")
            }
        }
    }
}
