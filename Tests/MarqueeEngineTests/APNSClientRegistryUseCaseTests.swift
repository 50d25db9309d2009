import Foundation
import MarqueeAPNS
import MarqueeCore
import MarqueeStorage
import MarqueeTesting
import Synchronization
import Testing

@testable import MarqueeEngine

/// Which APNs client the engine's work gets: one per app key and environment, replaced when the
/// key is rotated, the old one closed only once the runs holding it let go.
@Suite("Engine use case: APNs clients")
struct APNSClientRegistryUseCaseTests {
    /// Every client the registry asked for, in order.
    final class MadeClients: Sendable {
        let made = Mutex<[FakeAPNS]>([])

        var all: [FakeAPNS] { made.withLock { $0 } }

        func make(_ configuration: APNSClientConfiguration) -> FakeAPNS {
            let fake = FakeAPNS(environment: configuration.environment)
            made.withLock { $0.append(fake) }
            return fake
        }
    }

    @Test("one client per environment, reused; an environment the app lacks is refused")
    func onePerEnvironment() async throws {
        let harness = try await EngineHarness(environments: [.sandbox])
        let clients = MadeClients()
        let registry = harness.registry { configuration, _ in clients.make(configuration) }

        let first = try await registry.client(for: harness.app, environment: .sandbox)
        let second = try await registry.client(for: harness.app, environment: .sandbox)
        #expect(first === second)
        #expect(clients.all.count == 1)
        await #expect(throws: EngineError.self) {
            try await registry.client(for: harness.app, environment: .production)
        }
        await registry.shutdown()
        #expect(clients.all.map(\.shutdowns) == [1])
        await harness.close()
    }

    @Test("a rotated key gets a new client; the old one closes when the run holding it lets go")
    func rotation() async throws {
        let harness = try await EngineHarness(environments: [.sandbox])
        let clients = MadeClients()
        let registry = harness.registry { configuration, _ in clients.make(configuration) }
        let held = try await registry.holdClient(for: harness.app, environment: .sandbox)

        // Later than the first key: the app's current key is its newest (two keys of one instant tie).
        harness.clock.advance(by: 60)
        let rotated = SigningKey(
            appID: harness.app.id,
            keyID: "KEY7654321",
            teamID: "TEAM123456",
            createdAt: harness.clock.now
        )
        try await harness.store.storeSigningKey(rotated, privateKeyPEM: FakeAPNS.signingKeyPEM())
        let app = try #require(try await harness.store.app(harness.app.id))
        let current = try await registry.client(for: app, environment: .sandbox)
        #expect(current !== held)
        #expect(clients.all.count == 2)
        // The run still sends through the old one.
        #expect(clients.all[0].shutdowns == 0)

        await registry.release(held)
        try await waitUntil("the old client is closed") { clients.all[0].shutdowns == 1 }
        #expect(clients.all[1].shutdowns == 0)
        await registry.shutdown()
        #expect(clients.all[1].shutdowns == 1)
        await harness.close()
    }

    @Test("an app without a signing key gets no client, with what to do about it")
    func noSigningKey() async throws {
        let harness = try await EngineHarness(environments: [.sandbox])
        let registry = harness.registry { configuration, _ in FakeAPNS(environment: configuration.environment) }
        let keyless = App(
            name: "Later",
            bundleID: "com.example.later",
            teamID: "TEAM123456",
            environments: [.sandbox],
            createdAt: harness.clock.now
        )
        try await harness.store.createApp(keyless)
        let error = await #expect(throws: EngineError.self) {
            try await registry.client(for: keyless, environment: .sandbox)
        }
        #expect("\(String(describing: error))".contains("signing-key"))
        await registry.shutdown()
        await harness.close()
    }
}
