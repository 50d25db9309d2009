import Foundation
import NIOCore

@testable import MarqueeAPNS

/// A caller of the pool that keeps what it was told. (The machine's tests read completions from
/// the machine; the pool's from here.)
final class RecordingSink: APNSResponseSink {
    var isCancelled = false
    /// Outcomes delivered by `flushOutcomes`, by tag.
    private(set) var delivered: [(tag: Int, result: Result<APNSResponse, APNSError>)] = []
    private var buffered: [(tag: Int, result: Result<APNSResponse, APNSError>)] = []

    func requestCompleted(tag: Int, operation: APNSOperation, result: Result<APNSResponse, APNSError>) {
        buffered.append((tag, result))
    }

    func flushOutcomes() {
        delivered += buffered
        buffered = []
    }

    /// A device push of `kind` from this sink.
    func request(_ kind: APNSPushKind, tag: Int = 0) throws -> APNSQueuedRequest {
        let payload = ByteBuffer(string: #"{"aps":{"timestamp":1767225600,"event":"update","content-state":{}}}"#)
        let push = try APNSDevicePush(
            deviceToken: String(repeating: "ab", count: 32),
            bundleID: "com.example.app",
            payload: payload,
            kind: kind
        )
        return APNSQueuedRequest(operation: .device(push), sink: self, tag: tag)
    }
}

extension APNSPoolStateMachine {
    struct Unexpected: Error, CustomStringConvertible {
        var description: String
    }

    /// Takes the next request as if a free stream wrote it.
    mutating func written() throws -> APNSQueuedRequest {
        guard case .write(let request) = nextWrite() else { throw Unexpected(description: "no request to write") }
        return request
    }

    /// Submits `request`, which must be queued.
    mutating func queue(_ request: APNSQueuedRequest) throws {
        if let refused = submit(request) { throw Unexpected(description: "refused: \(refused.result)") }
    }
}

extension APNSPoolStateMachine.Outcome {
    var completion: APNSPoolStateMachine.Completion? {
        if case .completed(let completion) = self { return completion }
        return nil
    }

    var retryTimer: (id: Int, delay: Duration)? {
        if case .scheduleRetry(let id, let delay) = self { return (id, delay) }
        return nil
    }
}

extension APNSPoolStateMachine.AnswerDecision {
    var completion: APNSPoolStateMachine.Completion? {
        if case .outcome(let outcome) = self { return outcome.completion }
        return nil
    }

    var retryTimer: (id: Int, delay: Duration)? {
        if case .outcome(let outcome) = self { return outcome.retryTimer }
        return nil
    }

}

extension Result where Failure == APNSError {
    var failure: APNSError? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

extension APNSResponse {
    static func status(_ code: Int) -> APNSResponse {
        APNSResponse(status: code)
    }

    /// A rejection with APNs' JSON body.
    static func rejected(_ code: Int, _ reason: String) -> APNSResponse {
        var response = status(code)
        response.body = ByteBuffer(string: #"{"reason":"\#(reason)"}"#)
        return response
    }
}
