import Crypto
import Foundation
import MarqueeAPNS
import MarqueeCore
import MarqueeEmulator
import MetricsTestKit
import NIOCore
import Testing

@Suite("APNs client failure handling against the emulator")
struct APNSClientFailureTests {
    static let body = ByteBuffer(string: #"{"aps":{"timestamp":1767225600,"event":"update","content-state":{}}}"#)

    @Test(
        "429, 500 and 503 are retried with back-off until they pass",
        arguments: [
            APNSErrorReason.tooManyRequests, .internalServerError, .serviceUnavailable,
        ]
    )
    func retriesTransientFailures(reason: APNSErrorReason) async throws {
        try await withEmulatorClient { fixture in
            let device = try fixture.emulator.registerDevice(environment: .sandbox, bundleID: fixture.bundleID)
            fixture.emulator.injectFault(APNSEmulatorFault(.respond(reason), rate: .first(2), endpoints: [.devicePush]))
            let result = try await fixture.client.send(
                try APNSDevicePush(deviceToken: device.deviceToken, bundleID: fixture.bundleID, payload: Self.body)
            )
            #expect(!result.apnsID.isEmpty)
            #expect(fixture.emulator.counters.injectedFaults == 2)
            #expect(fixture.emulator.counters.devicePushesAccepted == 1)
        }
    }

    @Test("retries are bounded: the last transient failure reaches the caller as retryLater")
    func boundedRetries() async throws {
        try await withEmulatorClient { fixture in
            let device = try fixture.emulator.registerDevice(environment: .sandbox, bundleID: fixture.bundleID)
            fixture.emulator.injectFault(APNSEmulatorFault(.respond(.serviceUnavailable), endpoints: [.devicePush]))
            let error = await #expect(throws: APNSError.self) {
                _ = try await fixture.client.send(
                    try APNSDevicePush(deviceToken: device.deviceToken, bundleID: fixture.bundleID, payload: Self.body)
                )
            }
            #expect(error?.failureClass == .retryLater)
            #expect(error?.reason == .serviceUnavailable)
            #expect(fixture.emulator.counters.injectedFaults == testRetryPolicy.maximumAttempts)
        }
    }

    @Test("an uninstalled app's token answers 410 Unregistered with its timestamp: the token is dead, not retried")
    func deadToken() async throws {
        try await withEmulatorClient { fixture in
            let device = try fixture.emulator.registerDevice(environment: .sandbox, bundleID: fixture.bundleID)
            try fixture.emulator.uninstallApp(environment: .sandbox, deviceID: device.id)
            let error = await #expect(throws: APNSError.self) {
                _ = try await fixture.client.send(
                    try APNSDevicePush(deviceToken: device.deviceToken, bundleID: fixture.bundleID, payload: Self.body)
                )
            }
            guard case .rejected(let rejection) = error else {
                Issue.record("expected a rejection, got \(String(describing: error))")
                return
            }
            #expect(rejection.status == 410)
            #expect(rejection.reason == .unregistered)
            #expect(rejection.failureClass == .tokenDead)
            #expect(rejection.timestampMilliseconds != nil)
            #expect(fixture.emulator.rejectedRequests().count == 1)
        }
    }

    @Test("a push for a topic the team does not own is DeviceTokenNotForTopic: token dead")
    func wrongTopic() async throws {
        try await withEmulatorClient { fixture in
            let device = try fixture.emulator.registerDevice(environment: .sandbox, bundleID: fixture.bundleID)
            let error = await #expect(throws: APNSError.self) {
                _ = try await fixture.client.send(
                    try APNSDevicePush(deviceToken: device.deviceToken, bundleID: "org.other.app", payload: Self.body)
                )
            }
            #expect(error?.reason == .deviceTokenNotForTopic)
            #expect(error?.failureClass == .tokenDead)
        }
    }

    @Test("other 4xx answers are final and never retried")
    func requestRejected() async throws {
        try await withEmulatorClient { fixture in
            let error = await #expect(throws: APNSError.self) {
                _ = try await fixture.client.createChannel(
                    bundleID: fixture.bundleID + ".push-type.liveactivity",
                    storagePolicy: .mostRecentMessageStored
                )
            }
            #expect(error?.reason == .topicDisallowed)
            #expect(error?.failureClass == .requestRejected)
            #expect(fixture.emulator.rejectedRequests().count == 1)
        }
    }

    @Test("payloads over the limit are refused before sending, naming size and limit")
    func payloadTooLarge() throws {
        let big = ByteBuffer(repeating: UInt8(ascii: "x"), count: 4097)
        #expect(throws: APNSError.payloadTooLarge(size: 4097, limit: 4096)) {
            try APNSDevicePush(deviceToken: "ab", bundleID: "b", payload: big)
        }
        let broadcast = ByteBuffer(repeating: UInt8(ascii: "x"), count: 5121)
        #expect(throws: APNSError.payloadTooLarge(size: 5121, limit: 5120)) {
            try APNSBroadcast(bundleID: "b", channelID: "c", storagePolicy: .noMessageStored, payload: broadcast)
        }
    }

    @Test("shutdown answers a request waiting out its back-off with clientShutDown instead of leaving it hanging")
    func shutdownDuringBackoff() async throws {
        let slowRetries = APNSRetryPolicy(maximumAttempts: 3, initialDelay: .seconds(600), maximumDelay: .seconds(600))
        let metrics = TestMetrics()
        try await withEmulatorClient(retryPolicy: slowRetries, metrics: metrics) { fixture in
            let device = try fixture.emulator.registerDevice(environment: .sandbox, bundleID: fixture.bundleID)
            fixture.emulator.injectFault(APNSEmulatorFault(.respond(.serviceUnavailable), endpoints: [.devicePush]))
            let push = try APNSDevicePush(
                deviceToken: device.deviceToken,
                bundleID: fixture.bundleID,
                payload: Self.body
            )
            let client = fixture.client
            let pending = Task { try await client.send(push) }
            // The client has read the 503 (its answer's duration is recorded) and so holds the
            // request for its back-off. The emulator's fault counter moves before the answer is
            // even written: a shutdown then could find the request still in flight.
            while metrics.timers(label: "marquee_apns_request_duration_seconds").allSatisfy({ $0.values.isEmpty }) {
                try await Task.sleep(for: .milliseconds(5))
            }
            await client.shutdown()
            let result = await pending.result
            #expect(throws: APNSError.clientShutDown) { try result.get() }
        }
    }

    @Test("with nothing listening, connection attempts are bounded and the request fails as retryLater")
    func noServer() async throws {
        let client = try APNSClient(
            configuration: APNSClientConfiguration(
                environment: .sandbox,
                signingKey: APNSSigningKey(privateKey: .init(), keyID: "ABC123DEFG", teamID: "DEF123GHIJ"),
                pushEndpoint: APNSEndpoint(host: "127.0.0.1", port: 1, security: .cleartext),
                retryPolicy: testRetryPolicy
            )
        )
        let error = await #expect(throws: APNSError.self) {
            _ = try await client.send(try APNSDevicePush(deviceToken: "ab", bundleID: "b", payload: Self.body))
        }
        if case .connectionFailed = error {
        } else {
            Issue.record("expected connectionFailed, got \(String(describing: error))")
        }
        #expect(error?.failureClass == .retryLater)
        await client.shutdown()
    }
}
