import DequeModule
import MarqueeCore
import NIOCore

/// Carrying out what the state machine decided: timers for retries and reconnects, outcomes to
/// their sinks, giving up on what waits.
extension APNSConnectionPool {
    func unreachable(_ reason: String) -> String {
        "no connection to \(endpoint.host):\(endpoint.port): \(reason)"
    }

    func carryOut(_ action: APNSPoolStateMachine.ConnectFailureAction) {
        switch action {
        case .none:
            break
        case .scheduleReconnect(let delay):
            reconnect = eventLoop.scheduleTask(in: .nanoseconds(delay.wholeNanoseconds)) { [self] in
                reconnect = nil
                machine.reconnectTimerFired()
                dispatch()
            }
        case .giveUp(let error):
            failAllQueued(error)
        }
    }

    func carryOut(_ outcome: APNSPoolStateMachine.Outcome) {
        switch outcome {
        case .completed(let completion):
            deliver(completion)
        case .scheduleRetry(let timerID, let delay):
            retryTimers[timerID] = eventLoop.scheduleTask(in: .nanoseconds(delay.wholeNanoseconds)) { [self] in
                retryTimers.removeValue(forKey: timerID)
                machine.retryTimerFired(timerID)
                dispatch()
            }
        }
    }

    /// Hands an ended request to its sink, which delivers it at the next `flushSinks`.
    func deliver(_ completion: APNSPoolStateMachine.Completion) {
        let request = completion.request
        if let kind = request.operation.pushKind { metrics.recordOutcome(kind, completion.result) }
        request.sink.requestCompleted(tag: request.tag, operation: request.operation, result: completion.result)
        if lastDirtySink !== request.sink {
            dirtySinks[ObjectIdentifier(request.sink)] = request.sink
            lastDirtySink = request.sink
        }
    }

    func flushSinks() {
        guard !dirtySinks.isEmpty else { return }
        let sinks = dirtySinks
        dirtySinks.removeAll(keepingCapacity: true)
        lastDirtySink = nil
        for sink in sinks.values { sink.flushOutcomes() }
    }

    func failAllQueued(_ error: APNSError) {
        for completion in machine.failQueued(error) { deliver(completion) }
        while let source = sources.popFirst() {
            source.fail(with: error)
        }
        flushSinks()
    }
}
