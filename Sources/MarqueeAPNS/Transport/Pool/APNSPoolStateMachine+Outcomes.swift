import DequeModule

/// What becomes of a request that left a connection: the pool's one decision about answered,
/// unprocessed and uncertain requests.
extension APNSPoolStateMachine {
    /// What the pool does after an answer or an uncertain end.
    enum Outcome {
        /// The request ended: deliver this to its sink.
        case completed(Completion)
        /// Wait `delay`, then call `retryTimerFired(timerID)` and dispatch.
        case scheduleRetry(timerID: Int, delay: Duration)
    }

    /// What the pool does after an answer.
    enum AnswerDecision {
        case outcome(Outcome)
        /// APNs called the provider token expired, the first time for this request: renew the
        /// token rejected at `tokenGeneration`, tell the connection, then `retryWithRenewedToken`
        /// (or `finish` the request with the renewal's error).
        case renewTokenAndRetry(tokenGeneration: Int)
    }

    /// APNs answered `request` (accepted or rejected), through a connection writing with token
    /// `tokenGeneration`.
    mutating func answered(
        _ request: APNSQueuedRequest,
        response: APNSResponse,
        tokenGeneration: Int
    ) -> AnswerDecision {
        if response.isSuccess { return .outcome(.completed(finish(request, result: .success(response)))) }
        let rejection = response.rejection
        switch rejection.failureClass {
        case .renewTokenAndRetry where !request.renewedToken:
            return .renewTokenAndRetry(tokenGeneration: tokenGeneration)
        case .retryLater:
            return .outcome(retryLater(request, error: .rejected(rejection)))
        // Spelled out rather than `default` so that a new class has to be placed here on purpose:
        // everything else is final, the second ExpiredProviderToken of a request included.
        // (`uncertain` is never an answer's class.)
        case .renewTokenAndRetry, .tokenDead, .channelGone, .appMisconfigured, .requestRejected, .uncertain:
            return .outcome(.completed(finish(request, result: .failure(.rejected(rejection)))))
        }
    }

    /// The token was renewed after APNs called it expired: the request goes first, marked so
    /// that a second expiry ends it.
    mutating func retryWithRenewedToken(_ request: APNSQueuedRequest) {
        var retry = request
        retry.renewedToken = true
        queue.prepend(retry)
    }

    /// Requests APNs provably did not process (never written, above a GOAWAY's last-stream-id, or
    /// refused): back to the front of the queue, in their order, without counting an attempt.
    /// After shutdown they end `clientShutDown` instead.
    mutating func requeueUnprocessed(_ requests: [APNSQueuedRequest]) -> [Completion] {
        guard !isShutDown else {
            return requests.map { finish($0, result: .failure(.clientShutDown)) }
        }
        for request in requests.reversed() { queue.prepend(request) }
        return []
    }

    /// The one decision about a request that was written and never answered: APNs may have
    /// delivered it. What a device would show twice (a start) and what APNs would do twice (a
    /// channel creation) ends here as `uncertain`; the rest is retried like a transient failure.
    mutating func leftUncertain(_ request: APNSQueuedRequest, reason: String) -> Outcome {
        var request = request
        if request.uncertainty == nil { request.uncertainty = reason }
        guard request.operation.mayResendWhenUncertain else {
            return .completed(finish(request, result: .failure(.uncertain(reason))))
        }
        return retryLater(request, error: .uncertain(reason))
    }

    /// A retry's back-off ended: the request joins the back of the queue.
    mutating func retryTimerFired(_ timerID: Int) {
        guard let request = retryWaiting.removeValue(forKey: timerID) else { return }
        queue.append(request)
    }

    private mutating func retryLater(_ request: APNSQueuedRequest, error: APNSError) -> Outcome {
        guard request.attempt < settings.retryPolicy.maximumAttempts, !isShutDown, !request.sink.isCancelled else {
            return .completed(finish(request, result: .failure(isShutDown ? .clientShutDown : error)))
        }
        var retry = request
        let delay = settings.retryPolicy.delay(beforeRetry: retry.attempt)
        retry.attempt += 1
        let timerID = nextRetryTimerID
        nextRetryTimerID += 1
        retryWaiting[timerID] = retry
        return .scheduleRetry(timerID: timerID, delay: delay)
    }

    /// Ends `request` with `result`. A request that may already have been delivered by an earlier
    /// attempt never ends as "not sent": when the later attempts failed without a verdict, it ends
    /// uncertain.
    mutating func finish(_ request: APNSQueuedRequest, result: Result<APNSResponse, APNSError>) -> Completion {
        var result = result
        if let reason = request.uncertainty, case .failure(let error) = result, Self.isInconclusive(error) {
            result = .failure(.uncertain(reason))
        }
        outstanding -= 1
        return Completion(request: request, result: result)
    }

    /// Failures that say nothing about whether an earlier attempt reached APNs.
    private static func isInconclusive(_ error: APNSError) -> Bool {
        switch error {
        case .connectionFailed, .clientShutDown, .uncertain:
            true
        case .rejected(let rejection):
            rejection.failureClass == .retryLater || rejection.failureClass == .renewTokenAndRetry
        case .payloadTooLarge, .invalidRequest, .invalidResponse, .tokenSigningFailed, .cancelled,
            .invalidConfiguration:
            false
        }
    }
}
