import Foundation
import Synchronization

/// A clock that moves only when told to: for tests and for the emulator's scripted scenarios. A
/// sleep on it returns when the clock is moved (`advance`, `set`) to or past its deadline, or when
/// its task is cancelled, so that a test drives the waits of what it runs instead of waiting them
/// out; `sleepers` tells the test what waits, and until when.
public final class ManualWallClock: WallClock {
    private struct Sleeper {
        var deadline: Date
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now: Date
        var sleepers: [UInt64: Sleeper] = [:]
        var nextSleeper: UInt64 = 0
    }

    private let state: Mutex<State>

    public init(_ start: Date = Date(timeIntervalSince1970: 1_767_225_600)) {
        state = Mutex(State(now: start))
    }

    public var now: Date { state.withLock { $0.now } }

    /// The deadlines of the sleeps waiting now, earliest first.
    public var sleepers: [Date] { state.withLock { $0.sleepers.values.map(\.deadline).sorted() } }

    /// Moves the clock forward (or back, for a negative interval), waking the sleeps it reaches.
    public func advance(by interval: TimeInterval) {
        move { $0.addingTimeInterval(interval) }
    }

    /// Sets the clock, waking the sleeps it reaches.
    public func set(to date: Date) {
        move { _ in date }
    }

    public func sleep(until deadline: Date) async throws {
        let id = state.withLock { state in
            state.nextSleeper += 1
            return state.nextSleeper
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // Under the lock: a cancellation's handler, which takes it too, runs either before
                // (and the task is seen cancelled here) or after the sleeper is registered.
                let answer = state.withLock { state -> Result<Void, any Error>? in
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if deadline <= state.now { return .success(()) }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return nil
                }
                if let answer { continuation.resume(with: answer) }
            }
        } onCancel: {
            state.withLock { $0.sleepers.removeValue(forKey: id) }?.continuation.resume(throwing: CancellationError())
        }
    }

    private func move(_ change: (Date) -> Date) {
        let woken = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            state.now = change(state.now)
            let due = state.sleepers.filter { $0.value.deadline <= state.now }
            for id in due.keys { state.sleepers.removeValue(forKey: id) }
            return due.values.map(\.continuation)
        }
        for continuation in woken { continuation.resume() }
    }
}
