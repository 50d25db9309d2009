import Synchronization

/// A FIFO lock for async code: the SQLite store's one connection is used by one task at a time, so
/// a transaction's statements never interleave with another task's.
final class SerialAccess: Sendable {
    private struct State {
        var held = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    func withAccess<Result>(_ body: () async throws -> sending Result) async throws -> sending Result {
        await acquire()
        defer { release() }
        return try await body()
    }

    private func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted = state.withLock { state -> Bool in
                if state.held {
                    state.waiters.append(continuation)
                    return false
                }
                state.held = true
                return true
            }
            if granted { continuation.resume() }
        }
    }

    private func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.waiters.isEmpty {
                state.held = false
                return nil
            }
            // Hand the lock straight to the next waiter: `held` stays true.
            return state.waiters.removeFirst()
        }
        next?.resume()
    }
}
