import Foundation
import Synchronization

/// The time of day, injected wherever a rule depends on it: provider-token age, channel timestamps,
/// job due times, the emulator's device rules. Production code uses `SystemWallClock`; tests move a
/// `ManualWallClock` by hand.
public protocol WallClock: Sendable {
    /// The current time.
    var now: Date { get }
}

extension WallClock {
    /// Whole seconds since 1970, the unit of APNs' `timestamp`, `stale-date` and `apns-expiration`.
    public var unixSeconds: Int64 { Int64(now.timeIntervalSince1970.rounded(.down)) }
}

/// The system's clock.
public struct SystemWallClock: WallClock {
    public init() {}
    public var now: Date { Date() }
}

/// A clock that moves only when told to: for tests and for the emulator's scripted scenarios.
public final class ManualWallClock: WallClock {
    private let current: Mutex<Date>

    public init(_ start: Date = Date(timeIntervalSince1970: 1_767_225_600)) {
        current = Mutex(start)
    }

    public var now: Date { current.withLock { $0 } }

    /// Moves the clock forward (or back, for a negative interval).
    public func advance(by interval: TimeInterval) {
        current.withLock { $0 = $0.addingTimeInterval(interval) }
    }

    /// Sets the clock.
    public func set(to date: Date) {
        current.withLock { $0 = date }
    }
}
