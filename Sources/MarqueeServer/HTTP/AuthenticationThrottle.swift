/// Failed authentications per client address, in fixed windows: once an address has failed
/// `limit` times within `window` of its first failure, its requests are refused (429, with the
/// rest of the window as `Retry-After`) until the window ends, whatever key they carry, so that
/// guessing keys costs time rather than only answers. A value type fed with the time, so that it
/// is tested without clocks; `AuthenticationFailures` shares one between requests.
///
/// At most `maximumAddresses` windows are kept: when full, ended windows go first, then the
/// oldest, so that a flood of addresses costs bounded memory.
struct AuthenticationThrottle<Instant: InstantProtocol> where Instant.Duration == Duration {
    struct Settings: Sendable, Hashable {
        /// Failures an address may have within a window; 0 turns the throttle off.
        var limit: Int
        var window: Duration
        var maximumAddresses: Int = 10_000
    }

    private struct Window {
        var start: Instant
        var failures: Int
    }

    let settings: Settings
    private var windows: [String: Window] = [:]

    init(settings: Settings) {
        self.settings = settings
    }

    /// How long `address` must wait before it is heard again; `nil` if it may be heard now.
    func retryAfter(address: String, now: Instant) -> Duration? {
        guard settings.limit > 0, let window = windows[address], window.failures >= settings.limit else { return nil }
        let end = window.start.advanced(by: settings.window)
        return now < end ? now.duration(to: end) : nil
    }

    /// Counts a failed authentication of `address`.
    mutating func recordFailure(address: String, now: Instant) {
        guard settings.limit > 0 else { return }
        if var window = windows[address], now < window.start.advanced(by: settings.window) {
            window.failures += 1
            windows[address] = window
            return
        }
        if windows[address] == nil, windows.count >= settings.maximumAddresses { makeRoom(now: now) }
        windows[address] = Window(start: now, failures: 1)
    }

    var trackedAddresses: Int { windows.count }

    private mutating func makeRoom(now: Instant) {
        windows = windows.filter { now < $0.value.start.advanced(by: settings.window) }
        if windows.count >= settings.maximumAddresses, let oldest = windows.min(by: { $0.value.start < $1.value.start })
        {
            windows[oldest.key] = nil
        }
    }
}
