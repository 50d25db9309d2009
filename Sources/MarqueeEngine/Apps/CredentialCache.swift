import Foundation
import MarqueeCore
import Synchronization

/// Who a presented API key stands for: its record and, for an app's key, the app.
public struct AuthenticatedCaller: Sendable, Hashable {
    public var key: APIKey
    /// The key's app; `nil` for a deployment key (or an app that no longer exists).
    public var app: App?
}

/// Keeps what authenticating a key found for a few seconds, so that a busy caller (a scheduler
/// broadcasting every second) costs no store reads to authenticate: on PostgreSQL each is a round
/// trip on the broadcast's path.
///
/// Entries are found by the SHA-256 of the presented key (never the key itself), and only keys
/// that authenticated are kept: an unknown or wrong key is looked up every time. This replica
/// forgets a key it revokes and an app it changes at once. Other replicas learn of such a change
/// from the store (on PostgreSQL a NOTIFY, `PostgresStore.credentialsChannel`) and forget
/// everything (`forgetAll`); while they cannot hear of changes they keep nothing (`suspend`).
/// `lifetime` (`auth.cacheSeconds`) bounds how long an entry lives regardless; zero keeps nothing.
///
/// Every forgetting advances a generation, and an authentication remembers what it read only if
/// no forgetting happened since it began reading: a read that raced a revocation is never kept.
public final class CredentialCache: Sendable {
    private struct Entry {
        var caller: AuthenticatedCaller
        var expires: Date
    }

    private struct State {
        var entries: [[UInt8]: Entry] = [:]
        /// Advanced by every forgetting and suspension.
        var generation: UInt64 = 0
        /// False while changes made elsewhere cannot be heard of.
        var accepting = true
    }

    public let lifetime: Duration
    /// The most keys kept; past it the expired ones go, then the soonest to expire.
    let capacity: Int
    private let clock: any WallClock
    private let state = Mutex(State())

    public init(lifetime: Duration, capacity: Int = 10_000, clock: any WallClock) {
        self.lifetime = lifetime
        self.capacity = max(1, capacity)
        self.clock = clock
    }

    var isEnabled: Bool { lifetime > .zero }

    /// The caller a key with this hash authenticated as, unless that was longer ago than `lifetime`.
    func caller(forKeyHash hash: [UInt8]) -> AuthenticatedCaller? {
        guard isEnabled else { return nil }
        let now = clock.now
        return state.withLock { state in
            guard let entry = state.entries[hash] else { return nil }
            guard entry.expires > now else {
                state.entries[hash] = nil
                return nil
            }
            return entry.caller
        }
    }

    /// What to pass to `remember` for a read that begins now.
    var generation: UInt64 { state.withLock { $0.generation } }

    /// Keeps what a read begun at `generation` found, unless something was forgotten since (the
    /// read may have seen a key before its revocation) or the cache is suspended.
    func remember(_ caller: AuthenticatedCaller, forKeyHash hash: [UInt8], readAt generation: UInt64) {
        guard isEnabled else { return }
        let now = clock.now
        let entry = Entry(caller: caller, expires: now.addingTimeInterval(lifetime.timeInterval))
        state.withLock { state in
            guard state.accepting, state.generation == generation else { return }
            if state.entries[hash] == nil && state.entries.count >= capacity {
                state.entries = state.entries.filter { $0.value.expires > now }
                while state.entries.count >= capacity,
                    let soonest = state.entries.min(by: { $0.value.expires < $1.value.expires })
                {
                    state.entries[soonest.key] = nil
                }
            }
            state.entries[hash] = entry
        }
    }

    /// Forgets the key: it was revoked here.
    func forget(keyID: APIKeyID) {
        state.withLock {
            $0.generation &+= 1
            $0.entries = $0.entries.filter { $0.value.caller.key.id != keyID }
        }
    }

    /// Forgets every key of the app: the app changed here.
    func forget(appID: AppID) {
        state.withLock {
            $0.generation &+= 1
            $0.entries = $0.entries.filter { $0.value.caller.key.appID != appID }
        }
    }

    /// Forgets every key and resumes keeping them: a key or an app changed on another replica, or
    /// this replica hears of such changes again after a time it could not.
    public func forgetAll() {
        state.withLock {
            $0.generation &+= 1
            $0.entries.removeAll()
            $0.accepting = true
        }
    }

    /// Forgets every key and keeps none until `forgetAll`: changes made elsewhere cannot be heard
    /// of (the connection that listens for them is lost).
    public func suspend() {
        state.withLock {
            $0.generation &+= 1
            $0.entries.removeAll()
            $0.accepting = false
        }
    }

    var count: Int { state.withLock { $0.entries.count } }
}
