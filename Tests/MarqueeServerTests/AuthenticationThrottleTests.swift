import Testing

@testable import MarqueeServer

/// Failed authentications per address in fixed windows, on a clock the test moves.
@Suite("Authentication throttle rules")
struct AuthenticationThrottleTests {
    let zero = ContinuousClock.now
    func at(_ seconds: Int) -> ContinuousClock.Instant { zero.advanced(by: .seconds(seconds)) }

    @Test("an address is heard until its failures reach the limit, then refused until its window ends")
    func window() {
        var throttle = AuthenticationThrottle<ContinuousClock.Instant>(settings: .init(limit: 3, window: .seconds(60)))
        for second in 0..<3 {
            #expect(throttle.retryAfter(address: "10.0.0.1", now: at(second)) == nil)
            throttle.recordFailure(address: "10.0.0.1", now: at(second))
        }
        #expect(throttle.retryAfter(address: "10.0.0.1", now: at(10)) == .seconds(50))
        #expect(throttle.retryAfter(address: "10.0.0.2", now: at(10)) == nil)
        #expect(throttle.retryAfter(address: "10.0.0.1", now: at(60)) == nil)
        // A new window begins with the next failure.
        throttle.recordFailure(address: "10.0.0.1", now: at(61))
        #expect(throttle.retryAfter(address: "10.0.0.1", now: at(61)) == nil)
    }

    @Test("a limit of 0 throttles nobody")
    func off() {
        var throttle = AuthenticationThrottle<ContinuousClock.Instant>(settings: .init(limit: 0, window: .seconds(60)))
        for _ in 0..<100 { throttle.recordFailure(address: "10.0.0.1", now: at(0)) }
        #expect(throttle.retryAfter(address: "10.0.0.1", now: at(0)) == nil)
        #expect(throttle.trackedAddresses == 0)
    }

    @Test("a flood of addresses keeps at most maximumAddresses windows, ended ones dropped first")
    func bounded() {
        var throttle = AuthenticationThrottle<ContinuousClock.Instant>(
            settings: .init(limit: 1, window: .seconds(60), maximumAddresses: 100)
        )
        for index in 0..<100 { throttle.recordFailure(address: "old-\(index)", now: at(0)) }
        for index in 0..<1_000 { throttle.recordFailure(address: "new-\(index)", now: at(61)) }
        #expect(throttle.trackedAddresses == 100)
        #expect(throttle.retryAfter(address: "new-999", now: at(61)) != nil)
    }
}
