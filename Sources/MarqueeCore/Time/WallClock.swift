import Foundation

/// The time of day, and waiting for it: injected wherever a rule depends on time (provider-token
/// age, channel timestamps, job due times, the emulator's device rules) and wherever the engine
/// waits (retry back-offs, lease renewals, polling, commit intervals), so that a test that moves
/// the time also wakes what waits for it. Production code uses `SystemWallClock`; tests move a
/// `ManualWallClock` by hand.
public protocol WallClock: Sendable {
    /// The current time.
    var now: Date { get }

    /// Returns once `now` has reached `deadline` (at once if it has); throws `CancellationError`
    /// if the task is cancelled first.
    func sleep(until deadline: Date) async throws

    /// Returns once `duration` has passed on this clock; throws `CancellationError` if the task is
    /// cancelled first.
    func sleep(for duration: Duration) async throws
}

extension WallClock {
    /// Whole seconds since 1970, the unit of APNs' `timestamp`, `stale-date` and `apns-expiration`.
    public var unixSeconds: Int64 { Int64(now.timeIntervalSince1970.rounded(.down)) }

    public func sleep(for duration: Duration) async throws {
        try await sleep(until: now.addingTimeInterval(duration.timeInterval))
    }
}

/// The system's clock. A sleep for a duration is on the monotonic clock, so that a step of the
/// time of day (NTP) does not stretch or cut it; a sleep until a time waits for that time of day.
public struct SystemWallClock: WallClock {
    public init() {}
    public var now: Date { Date() }

    public func sleep(until deadline: Date) async throws {
        try await Task.sleep(for: .seconds(max(0, deadline.timeIntervalSinceNow)))
    }

    public func sleep(for duration: Duration) async throws {
        try await Task.sleep(for: duration)
    }
}

extension WallClock {
    /// The time passed on this clock since `start` (negative if the clock was set back).
    public func elapsed(since start: Date) -> Duration {
        .seconds(now.timeIntervalSince(start))
    }
}
