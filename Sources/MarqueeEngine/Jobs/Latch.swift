import Synchronization

/// Something that happens once and that tasks wait for (a run's stop raised, a worker's runs all
/// ended): the waiters resume when it opens, without looking again and again.
final class Latch: Sendable {
    private struct State {
        var isOpen: Bool
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter: UInt64 = 0
    }

    private let state: Mutex<State>

    init(open: Bool = false) {
        state = Mutex(State(isOpen: open))
    }

    var isOpen: Bool { state.withLock { $0.isOpen } }

    /// Opens the latch and resumes every waiter; opening it again does nothing.
    func open() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.isOpen = true
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once the latch is open, or once the task is cancelled (whether it is open or not).
    func wait() async {
        let id = state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                // Under the lock: a cancellation's handler, which takes it too, runs either before
                // (and the task is seen cancelled here) or after the waiter is registered.
                let now = state.withLock { state -> Bool in
                    if state.isOpen || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}
