import CoreMetrics
import Crypto
import Foundation
import Logging
import MarqueeAPNS
import MarqueeCore
import MarqueeEmulator
import NIOCore
import NIOPosix
import Testing

/// A running emulator on port 0 (TLS listeners, generated CA) and a client pointed at it, stopped
/// together by `withEmulatorClient`.
struct EmulatorFixture {
    let emulator: APNSEmulator
    let client: APNSClient
    let key: APNSEmulatorDemoKey
    var bundleID: String { key.bundleID }

    static func configuration(
        profile: APNSEmulatorProfile = .observed,
        clock: any WallClock = SystemWallClock(),
        tweak: (inout APNSEmulatorConfiguration) -> Void = { _ in }
    ) -> APNSEmulatorConfiguration {
        var configuration = APNSEmulatorConfiguration(profile: profile)
        configuration.environments = [.sandbox]
        configuration.h2c = false
        configuration.inspection = false
        configuration.clock = clock
        tweak(&configuration)
        return configuration
    }
}

/// The client's debug log on stderr when `APNS_TEST_DEBUG` is set, silent otherwise.
let testLogger: Logger = {
    var logger = Logger(label: "marquee.apns.test", factory: { StreamLogHandler.standardError(label: $0) })
    logger.logLevel = ProcessInfo.processInfo.environment["APNS_TEST_DEBUG"] != nil ? .debug : .error
    return logger
}()

/// Fast retries so that tests of back-off stay within milliseconds.
let testRetryPolicy = APNSRetryPolicy(
    maximumAttempts: 3,
    initialDelay: .milliseconds(5),
    maximumDelay: .milliseconds(40),
    maximumConnectAttempts: 3
)

func withEmulatorClient<Result: Sendable>(
    emulator configuration: APNSEmulatorConfiguration = EmulatorFixture.configuration(),
    clock: any WallClock = SystemWallClock(),
    tokenRenewalAge: TimeInterval = 50 * 60,
    retryPolicy: APNSRetryPolicy = testRetryPolicy,
    transport: APNSClientConfiguration.Transport = APNSClientConfiguration.Transport(),
    metrics: (any MetricsFactory)? = nil,
    _ body: (EmulatorFixture) async throws -> Result
) async throws -> Result {
    let emulator = APNSEmulator(configuration: configuration)
    try await emulator.start()
    do {
        let key = try emulator.makeDemoKey(bundleID: "com.example.marquee")
        let caPath = try #require(emulator.caCertificatePath)
        let pushPort = try #require(
            emulator.port(for: APNSEmulatorListener(environment: .sandbox, kind: .push, transport: .tls))
        )
        let managePort = try #require(
            emulator.port(for: APNSEmulatorListener(environment: .sandbox, kind: .channelManagement, transport: .tls))
        )
        let client = try APNSClient(
            configuration: APNSClientConfiguration(
                environment: .sandbox,
                signingKey: try APNSSigningKey(pemRepresentation: key.p8PEM, keyID: key.keyID, teamID: key.teamID),
                pushEndpoint: APNSEndpoint(
                    host: "127.0.0.1",
                    port: pushPort,
                    security: .tls(trustRoots: .pemFile(caPath))
                ),
                channelManagementEndpoint: APNSEndpoint(
                    host: "127.0.0.1",
                    port: managePort,
                    security: .tls(trustRoots: .pemFile(caPath))
                ),
                tokenRenewalAge: tokenRenewalAge,
                retryPolicy: retryPolicy,
                transport: transport,
                metricsFactory: metrics ?? MetricsSystem.factory
            ),
            clock: clock,
            logger: testLogger
        )
        do {
            let result = try await body(EmulatorFixture(emulator: emulator, client: client, key: key))
            await client.shutdown()
            await emulator.shutdown()
            return result
        } catch {
            await client.shutdown()
            throw error
        }
    } catch {
        await emulator.shutdown()
        throw error
    }
}
