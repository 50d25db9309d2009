import NIOCore
import Synchronization

/// One replica's `AuthenticationThrottle`, shared by its requests. Addresses are counted as the
/// socket sees them: behind a proxy every client has the proxy's address, and the throttle would
/// refuse them all at once; set `auth.throttle.failures` to 0 there and throttle at the proxy.
final class AuthenticationFailures: Sendable {
    private let throttle: Mutex<AuthenticationThrottle<ContinuousClock.Instant>>

    init(settings: AuthenticationThrottle<ContinuousClock.Instant>.Settings) {
        throttle = Mutex(AuthenticationThrottle(settings: settings))
    }

    func retryAfter(_ address: SocketAddress?) -> Duration? {
        throttle.withLock { throttle in
            // No address has failed (the usual case): the address is not even formatted.
            guard throttle.trackedAddresses > 0, let key = Self.key(address) else { return nil }
            return throttle.retryAfter(address: key, now: .now)
        }
    }

    func recordFailure(_ address: SocketAddress?) {
        guard let key = Self.key(address) else { return }
        throttle.withLock { $0.recordFailure(address: key, now: .now) }
    }

    /// The address without its port (a client opens many connections).
    static func key(_ address: SocketAddress?) -> String? {
        guard let address else { return nil }
        return address.ipAddress ?? address.pathname
    }
}
