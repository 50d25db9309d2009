import MarqueeAPNS
import MarqueeCore
import MarqueeEmulator
import MetricsTestKit
import NIOCore
import Testing

/// The adaptive concurrency limit end to end: the client against the emulator over TLS HTTP/2,
/// answers 5–25 ms after each request as the chaos suite has them, one connection with a budget of
/// 1,000 streams. Counts only, never durations: the figures move with the machine's load, the
/// comparison between the two modes does not.
@Suite("Adaptive concurrency against the emulator")
struct APNSAdaptiveConcurrencyTests {
    struct FanOut {
        var accepted = 0
        var uncertain = 0
        var otherFailures: [String] = []
        /// The most requests in flight on a connection right after a batch was written to it.
        var peakInFlight = 0
    }

    /// Sends `count` starts to 300 devices through a client with one connection, the emulator
    /// resetting the connection unanswered on every `resetEvery`th push when given.
    static func fanOut(adaptive: Bool, count: Int = 3_000, resetEvery: Int? = nil) async throws -> FanOut {
        let configuration = EmulatorFixture.configuration { $0.historyPerTarget = 10 }
        let transport = APNSClientConfiguration.Transport(connectionsPerEndpoint: 1, adaptiveConcurrency: adaptive)
        let metrics = TestMetrics()
        return try await withEmulatorClient(emulator: configuration, transport: transport, metrics: metrics) {
            fixture in
            let devices = try (0..<300).map { _ in
                try fixture.emulator.registerDevice(environment: .sandbox, bundleID: fixture.bundleID)
            }
            fixture.emulator.injectFault(
                APNSEmulatorFault(.delay(.milliseconds(5), jitter: .milliseconds(20)), endpoints: [.devicePush])
            )
            if let resetEvery {
                fixture.emulator.injectFault(
                    APNSEmulatorFault(.resetConnection, rate: .everyNth(resetEvery), endpoints: [.devicePush])
                )
            }
            // Counted as starts by the client (never resent when uncertain); the emulator's device
            // tokens take it as an update.
            let body = ByteBuffer(
                string: #"{"aps":{"timestamp":1767225600,"event":"update","content-state":{"home":1,"away":0}}}"#
            )
            let pushes = try (0..<count).map { index in
                try APNSDevicePush(
                    deviceToken: devices[index % devices.count].deviceToken,
                    bundleID: fixture.bundleID,
                    payload: body,
                    kind: .start
                )
            }
            var result = FanOut()
            for await chunk in fixture.client.send(pushes) {
                for outcome in chunk {
                    switch outcome.result {
                    case .success: result.accepted += 1
                    case .failure(.uncertain): result.uncertain += 1
                    case .failure(let error): result.otherFailures.append("\(error)")
                    }
                }
            }
            let inFlight = try metrics.expectRecorder(
                "marquee_apns_connection_streams_in_flight",
                [("environment", "sandbox")]
            )
            result.peakInFlight = Int(inFlight.values.max() ?? 0)
            return result
        }
    }

    @Test("a fan-out of 3,000 starts completes with far fewer in flight than the stream budget")
    func fanOutStaysBelowTheBudget() async throws {
        let adaptive = try await Self.fanOut(adaptive: true)
        #expect(adaptive.accepted == 3_000)
        #expect(adaptive.uncertain == 0)
        #expect(adaptive.otherFailures.isEmpty, "\(adaptive.otherFailures.prefix(3))")
        #expect(adaptive.peakInFlight > 0)
        #expect(
            adaptive.peakInFlight <= 250,
            "at most a quarter of the 1,000-stream budget; peak \(adaptive.peakInFlight)"
        )

        // The fixed window fills the budget on the same path: what the adaptive limit saves.
        let fixed = try await Self.fanOut(adaptive: false)
        #expect(fixed.accepted == 3_000)
        #expect(
            fixed.peakInFlight >= 2 * adaptive.peakInFlight,
            "fixed \(fixed.peakInFlight), adaptive \(adaptive.peakInFlight)"
        )
    }

    @Test("connection resets leave several times fewer starts uncertain than with the fixed window")
    func resetsLeaveFewerUncertain() async throws {
        // A reset on every 600th push the emulator sees, in both modes: each cuts off what its
        // connection had in flight, and a start in flight is uncertain, never sent again.
        let fixed = try await Self.fanOut(adaptive: false, resetEvery: 600)
        let adaptive = try await Self.fanOut(adaptive: true, resetEvery: 600)
        for run in [fixed, adaptive] {
            #expect(run.accepted + run.uncertain == 3_000)
            #expect(run.otherFailures.isEmpty, "\(run.otherFailures.prefix(3))")
            #expect(run.uncertain > 0, "a reset cut off at least its own push")
        }
        #expect(
            adaptive.uncertain * 3 <= fixed.uncertain,
            """
            uncertain: fixed \(fixed.uncertain) (peak \(fixed.peakInFlight) in flight), adaptive \
            \(adaptive.uncertain) (peak \(adaptive.peakInFlight))
            """
        )
    }
}
