import MarqueeCore
import Synchronization

/// Wakes a waiting job worker at once: an enqueue in this process, or a notification from the
/// store (LISTEN/NOTIFY on PostgreSQL). Without it the worker polls.
public final class JobWakeup: Sendable {
    private struct State {
        var signalled = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())
    /// The clock a wait's timeout runs on.
    private let clock: any WallClock

    public init(clock: any WallClock) {
        self.clock = clock
    }

    /// Wakes the waiting worker, or the next one to wait.
    public func signal() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter else {
                state.signalled = true
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Waits for a signal, at most `timeout`. One waiter at a time.
    func wait(timeout: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                do {
                    try await self.clock.sleep(for: timeout)
                    self.signal()
                } catch {}
            }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if state.signalled {
                        state.signalled = false
                        return true
                    }
                    state.waiter = continuation
                    return false
                }
                if now { continuation.resume() }
            }
            group.cancelAll()
        }
    }
}
