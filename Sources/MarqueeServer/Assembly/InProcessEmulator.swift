import Crypto
import Foundation
import Logging
import MarqueeAPNS
import MarqueeCore
import MarqueeEmulator
import MarqueeEngine
import ServiceLifecycle

/// The APNs emulator run inside `marquee serve` when no APNs is configured: Marquee's clients talk
/// to it over real TLS HTTP/2, and apps and signing keys are registered with it as they are
/// created, so that everything works end to end with no Apple account. Started here, before the
/// service group (its ports configure the APNs clients); the emulator itself is the group's
/// service that serves until the shutdown.
struct InProcessEmulator {
    let emulator: APNSEmulator

    /// Starts an emulator on free ports of 127.0.0.1, on the service's clock: provider tokens
    /// signed at the service's time are fresh to it, and a test's `ManualWallClock` moves the
    /// devices' activities (8 hours, the Lock Screen's 4) along with the service's schedules.
    static func start(stateDirectory: String?, clock: any WallClock, logger: Logger) async throws -> InProcessEmulator {
        var configuration = APNSEmulatorConfiguration()
        configuration.logger = logger
        configuration.clock = clock
        if let stateDirectory {
            try FileManager.default.createDirectory(
                atPath: stateDirectory,
                withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700]
            )
            configuration.caCertificatePath = (stateDirectory as NSString).appendingPathComponent("ca.pem")
        }
        let emulator = APNSEmulator(configuration: configuration)
        try await emulator.start()
        return InProcessEmulator(emulator: emulator)
    }

    /// Where Marquee's clients connect: the emulator's TLS listeners, trusting its CA.
    func target() throws -> APNSTarget {
        guard let ca = emulator.caCertificatePEM else {
            throw ConfigurationError(key: "apns.target", "the emulator has no CA")
        }
        var push: [APNSEnvironment: APNSEndpoint] = [:]
        var management: [APNSEnvironment: APNSEndpoint] = [:]
        for environment in APNSEnvironment.allCases {
            let security = APNSEndpoint.Security.tls(trustRoots: .pem(ca))
            if let port = emulator.port(
                for: APNSEmulatorListener(environment: environment, kind: .push, transport: .tls)
            ) {
                push[environment] = APNSEndpoint(host: "127.0.0.1", port: port, security: security)
            }
            if let port = emulator.port(
                for: APNSEmulatorListener(environment: environment, kind: .channelManagement, transport: .tls)
            ) {
                management[environment] = APNSEndpoint(host: "127.0.0.1", port: port, security: security)
            }
        }
        return APNSTarget(pushEndpoints: push, channelManagementEndpoints: management)
    }
}

/// Tells the in-process emulator about apps and signing keys as Marquee learns them.
struct EmulatorAccountProvisioner: APNSAccountProvisioner {
    let emulator: APNSEmulator

    func provision(app: App) async throws {
        try emulator.registerApp(bundleID: app.bundleID, teamID: app.teamID)
    }

    func provision(signingKey: SigningKey, privateKeyPEM: String, of app: App) async throws {
        let privateKey = try P256.Signing.PrivateKey(pemRepresentation: privateKeyPEM)
        emulator.registerKey(
            teamID: signingKey.teamID,
            keyID: signingKey.keyID,
            publicKey: privateKey.publicKey,
            environments: signingKey.environments.isEmpty ? Set(APNSEnvironment.allCases) : signingKey.environments
        )
    }

    /// An emulator keeps no state across restarts: everything the store knows is registered again.
    func provisionEverything(in store: any MarqueeStore) async throws {
        for app in try await store.apps() {
            try await provision(app: app)
            for key in try await store.signingKeys(appID: app.id) {
                guard let pem = try await store.signingKeyPEM(appID: app.id, id: key.id) else { continue }
                try await provision(signingKey: key, privateKeyPEM: pem, of: app)
            }
        }
    }
}
