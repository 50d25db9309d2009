import Synchronization

/// A FIFO lock for async code: the SQLite store's one connection is used by one task at a time, so
/// a transaction's statements never interleave with another task's. A task cancelled while it waits
/// leaves the queue and throws `CancellationError`; one that holds the lock finishes its statement.
final class SerialAccess: Sendable {
    /// One waiting task. Its state is only read or written under `SerialAccess.state`'s lock,
    /// which is what makes sharing it across the cancellation handler safe.
    private final class Waiter: @unchecked Sendable {
        enum Phase {
            case arriving
            case queued(CheckedContinuation<Void, any Error>)
            case granted
            case cancelled
        }

        var phase: Phase = .arriving
    }

    private struct State {
        var held = false
        var queue: [Waiter] = []
    }

    private let state = Mutex(State())

    func withAccess<Result>(_ body: () async throws -> sending Result) async throws -> sending Result {
        try await acquire()
        defer { release() }
        return try await body()
    }

    private func acquire() async throws {
        let waiter = Waiter()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let granted: Bool? = state.withLock { state in
                    if case .cancelled = waiter.phase { return nil }
                    if !state.held {
                        state.held = true
                        waiter.phase = .granted
                        return true
                    }
                    waiter.phase = .queued(continuation)
                    state.queue.append(waiter)
                    return false
                }
                switch granted {
                case true?: continuation.resume()
                case nil: continuation.resume(throwing: CancellationError())
                case false?: break
                }
            }
        } onCancel: {
            let continuation: CheckedContinuation<Void, any Error>? = state.withLock { state in
                switch waiter.phase {
                case .arriving:
                    waiter.phase = .cancelled
                    return nil
                case .queued(let continuation):
                    waiter.phase = .cancelled
                    state.queue.removeAll { $0 === waiter }
                    return continuation
                case .granted, .cancelled:
                    return nil
                }
            }
            continuation?.resume(throwing: CancellationError())
        }
    }

    private func release() {
        let next: CheckedContinuation<Void, any Error>? = state.withLock { state in
            guard !state.queue.isEmpty else {
                state.held = false
                return nil
            }
            // Hand the lock straight to the next waiter: `held` stays true.
            let waiter = state.queue.removeFirst()
            guard case .queued(let continuation) = waiter.phase else { return nil }
            waiter.phase = .granted
            return continuation
        }
        next?.resume()
    }
}
