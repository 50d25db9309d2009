import Foundation
import MarqueeAPNS
import MarqueeCore
import MarqueeEmulator
import NIOCore
import Testing

@Suite("Provider-token renewal under an injected clock, against the emulator")
struct APNSClientTokenTests {
    /// The start of a token window (a multiple of 50 minutes since 1970), so that the client's first
    /// token is fresh and the scenarios below do not depend on the time of day the tests run at.
    static let windowStart = Date(timeIntervalSince1970: 1_767_225_000)
    static let body = ByteBuffer(string: #"{"aps":{"timestamp":1767225600,"event":"update","content-state":{}}}"#)

    func push(_ fixture: EmulatorFixture, _ device: EmulatedDevice) throws -> APNSDevicePush {
        try APNSDevicePush(deviceToken: device.deviceToken, bundleID: fixture.bundleID, payload: Self.body)
    }

    @Test("the token is kept until the renewal age and then replaced on the same connection without 429s")
    func scheduledRenewal() async throws {
        let clock = ManualWallClock(Self.windowStart)
        try await withEmulatorClient(emulator: EmulatorFixture.configuration(clock: clock), clock: clock) { fixture in
            let device = try fixture.emulator.registerDevice(environment: .sandbox, bundleID: fixture.bundleID)
            for _ in 0..<5 {
                _ = try await fixture.client.send(try push(fixture, device))
                clock.advance(by: 15 * 60)  // 0, 15, 30, 45, 60 minutes: the window ends at 50, the token changes at 60
            }
            _ = try await fixture.client.send(try push(fixture, device))
            #expect(fixture.emulator.rejectedRequests().isEmpty)
            #expect(fixture.emulator.counters.devicePushesAccepted == 6)
        }
    }

    /// The emulator expires tokens sooner than the client renews them, as a skewed clock would. At 35
    /// minutes the connection may change its token (its last change is over 20 minutes old); at 11
    /// minutes it may not, so the retry goes out on a fresh connection instead of risking a 429.
    @Test(
        "ExpiredProviderToken renews the token once and retries without ever a TooManyProviderTokenUpdates",
        arguments: [(expiresAfter: 30.0, elapsed: 35.0), (expiresAfter: 10.0, elapsed: 11.0)]
    )
    func expiredTokenRenewedOnce(expiresAfter: Double, elapsed: Double) async throws {
        let clock = ManualWallClock(Self.windowStart)
        let configuration = EmulatorFixture.configuration(clock: clock) {
            $0.providerTokenMaximumAge = expiresAfter * 60
        }
        try await withEmulatorClient(emulator: configuration, clock: clock) { fixture in
            let device = try fixture.emulator.registerDevice(environment: .sandbox, bundleID: fixture.bundleID)
            _ = try await fixture.client.send(try push(fixture, device))
            clock.advance(by: elapsed * 60)
            _ = try await fixture.client.send(try push(fixture, device))
            #expect(fixture.emulator.rejectedRequests().map(\.reason) == ["ExpiredProviderToken"])
            #expect(fixture.emulator.counters.devicePushesAccepted == 2)
        }
    }

    @Test("a second ExpiredProviderToken for the same request is not retried again")
    func renewsOnlyOnce() async throws {
        let clock = ManualWallClock(Self.windowStart)
        try await withEmulatorClient(emulator: EmulatorFixture.configuration(clock: clock), clock: clock) { fixture in
            let device = try fixture.emulator.registerDevice(environment: .sandbox, bundleID: fixture.bundleID)
            fixture.emulator.injectFault(APNSEmulatorFault(.respond(.expiredProviderToken), endpoints: [.devicePush]))
            let error = await #expect(throws: APNSError.self) {
                _ = try await fixture.client.send(try push(fixture, device))
            }
            #expect(error?.failureClass == .renewTokenAndRetry)
            #expect(fixture.emulator.counters.injectedFaults == 2)
        }
    }
}
