import NIOCore

/// The sink of one awaited request: completes a promise.
final class APNSSingleRequestSink: APNSResponseSink, @unchecked Sendable {
    // @unchecked: created off the loop, then touched only on the pool's event loop; the promise is
    // thread-safe.
    private let promise: EventLoopPromise<APNSResponse>
    private var completed = false
    private(set) var isCancelled = false

    init(promise: EventLoopPromise<APNSResponse>) {
        self.promise = promise
    }

    func requestCompleted(tag: Int, operation: APNSOperation, result: Result<APNSResponse, APNSError>) {
        guard !completed else { return }
        completed = true
        switch result {
        case .success(let response): promise.succeed(response)
        case .failure(let error): promise.fail(error)
        }
    }

    func flushOutcomes() {}

    /// The caller's task was cancelled: stop waiting now; a request not yet written is dropped.
    func cancel() {
        isCancelled = true
        guard !completed else { return }
        completed = true
        promise.fail(APNSError.cancelled)
    }
}
