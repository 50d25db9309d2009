import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension URLSession {
    /// `data(for:)`, whose cancellation ends the wait at once and can neither hang nor crash: the
    /// caller is answered `CancellationError`, and the request itself runs to its answer or its
    /// `timeoutInterval` in the background, its answer dropped.
    ///
    /// FoundationNetworking (Linux) cannot be asked to cancel safely:
    /// - its `data(for:)` cancels the request from the task's cancellation handler, which Swift runs
    ///   holding the task's status lock, and `URLSessionTask.cancel()` waits for the session's queue;
    ///   when that queue is at the same moment delivering the answer, it resumes the task and needs
    ///   the same lock, and each waits for the other for good (a test process hung so, every thread
    ///   idle: the emulator's app model cancelled at shutdown a report whose answer was arriving);
    /// - `URLSessionTask.cancel()` called just as the request completes stops the process
    ///   ("Trying to access a behaviour for a task that in not in the registry").
    /// So nothing here cancels a `URLSessionTask`, and the cancellation handler only hands the answer
    /// to another queue, which resumes the caller off the lock.
    public func cancellableData(for request: URLRequest) async throws -> (Data, URLResponse) {
        let answer = PendingAnswer()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard answer.hold(continuation) else { return }
                dataTask(with: request) { data, response, error in
                    if let data, let response {
                        answer.finish(.success((data, response)))
                    } else {
                        answer.finish(.failure(error ?? URLError(.badServerResponse)))
                    }
                }
                .resume()
            }
        } onCancel: {
            DispatchQueue.global().async { answer.finish(.failure(CancellationError())) }
        }
    }
}

/// A request's answer and its caller's continuation, whichever comes first; the first answer wins.
/// Unchecked: its fields are read and written under `lock` only.
private final class PendingAnswer: @unchecked Sendable {
    typealias Answer = Result<(Data, URLResponse), any Error>

    private let lock = NSLock()
    private var continuation: CheckedContinuation<(Data, URLResponse), any Error>?
    private var answer: Answer?

    /// Keeps `continuation` until the answer; false (and `continuation` resumed) if the caller was
    /// cancelled before: then no request is sent.
    func hold(_ continuation: CheckedContinuation<(Data, URLResponse), any Error>) -> Bool {
        let earlier = lock.withLock {
            if answer == nil { self.continuation = continuation }
            return answer
        }
        guard let earlier else { return true }
        continuation.resume(with: earlier)
        return false
    }

    func finish(_ answer: Answer) {
        let waiting = lock.withLock { () -> CheckedContinuation<(Data, URLResponse), any Error>? in
            guard self.answer == nil else { return nil }
            self.answer = answer
            defer { continuation = nil }
            return continuation
        }
        waiting?.resume(with: answer)
    }
}
