import NIOCore

/// A fan-out: the pool pulls pushes from the batch's input while the batch's window and the
/// consumer allow, and outcomes go back in chunks through a back-pressured async sequence. No task
/// and no continuation per push; all bookkeeping runs on the pool's event loop.
final class APNSPushBatch<Input: APNSPushBatchInput>: APNSRequestSource, APNSResponseSink, @unchecked Sendable {
    // @unchecked: created off the loop, then touched only on the pool's event loop (the delegate and
    // the page pump hop there before touching it).

    typealias Producer = NIOAsyncSequenceProducer<
        [APNSPushOutcome], NIOAsyncSequenceProducerBackPressureStrategies.HighLowWatermark, APNSPushBatchDelegate
    >

    /// Internal rather than private only for the page source's extension (APNSPushBatch+Pages).
    var input: Input
    private let window: Int
    private var nextIndex = 0
    private var outstanding = 0
    private var inputEnded = false
    /// The input had nothing at hand: paused until `inputArrived` says more came.
    private var inputWaiting = false
    private var consumerWantsMore = true
    /// When the batch began waiting on its input with room to send, and on its consumer
    /// (`marquee_apns_batch_wait_seconds`); `nil` while it does not.
    private var waitingOnSourceSince: NIODeadline?
    private var waitingOnConsumerSince: NIODeadline?
    private var pending: [APNSPushOutcome] = []
    private var producerSource: Producer.Source?
    private var finished = false
    private(set) var isCancelled = false
    /// Set when the pool gave up on the batch: the rest of the input is answered with this error, a
    /// chunk at a time as the consumer asks, instead of being sent.
    private var failure: APNSError?
    /// Pushes answered with `failure` unsent are failed pushes too.
    private let metrics: APNSClientMetrics

    init(input: Input, window: Int, metrics: APNSClientMetrics) {
        self.input = input
        self.window = window
        self.metrics = metrics
    }

    func attach(_ source: Producer.Source) {
        producerSource = source
    }

    var isPaused: Bool { !consumerWantsMore || outstanding >= window || inputWaiting }

    func nextRequest() -> APNSRequestSourceStep {
        if isCancelled || inputEnded || failure != nil { return .exhausted }
        if isPaused { return .paused }
        switch input.next() {
        case .push(let push):
            let index = nextIndex
            nextIndex += 1
            outstanding += 1
            return .request(APNSQueuedRequest(operation: .device(push), sink: self, tag: index))
        case .waiting:
            // The pool asked because a connection has room: from here the batch waits on its source.
            inputWaiting = true
            waitingOnSourceSince = .now()
            return .paused
        case .end:
            inputEnded = true
            finishIfDone()
            return .exhausted
        }
    }

    func requestCompleted(tag: Int, operation: APNSOperation, result: Result<APNSResponse, APNSError>) {
        outstanding -= 1
        guard case .device(let push) = operation, !isCancelled else { return }
        pending.append(APNSPushOutcome(index: tag, push: push, result: result))
    }

    func flushOutcomes() {
        if !pending.isEmpty, let producerSource, !isCancelled {
            let chunk = pending
            pending = []
            pending.reserveCapacity(chunk.count)
            switch producerSource.yield(chunk) {
            case .produceMore: consumerAskedForMore()
            case .stopProducing:
                // Only while there is more to send: a batch whose input ended loses nothing by the pause.
                if consumerWantsMore, !inputEnded { waitingOnConsumerSince = .now() }
                consumerWantsMore = false
            case .dropped: cancel()
            }
        }
        finishIfDone()
    }

    private func finishIfDone() {
        guard !finished, inputEnded || isCancelled, outstanding == 0, pending.isEmpty, let producerSource else {
            return
        }
        finished = true
        input.close()
        producerSource.finish()
    }

    /// The consumer asked for more after the batch paused.
    func resume(pool: APNSConnectionPool) {
        consumerAskedForMore()
        proceed(pool: pool)
    }

    /// The consumer takes outcomes again: a wait on it (if one began) ends here.
    private func consumerAskedForMore() {
        if let since = waitingOnConsumerSince {
            metrics.recordBatchWait(.consumer, since: since)
            waitingOnConsumerSince = nil
        }
        consumerWantsMore = true
    }

    /// The input has more (a page arrived, or the source ended) after the batch found it empty.
    func inputArrived(pool: APNSConnectionPool) {
        guard inputWaiting else { return }
        inputWaiting = false
        if let since = waitingOnSourceSince {
            metrics.recordBatchWait(.source, since: since)
            waitingOnSourceSince = nil
        }
        proceed(pool: pool)
    }

    private func proceed(pool: APNSConnectionPool) {
        if failure != nil {
            failMore()
        } else {
            pool.dispatch()
        }
    }

    /// The consumer stopped iterating: queued pushes are dropped, nothing new is pulled.
    func cancel() {
        guard !isCancelled else { return }
        isCancelled = true
        pending = []
        input.close()
        finishIfDone()
    }

    func poolShutDown() {
        fail(with: .clientShutDown)
    }

    /// The pool gave up (no connection, or shut down); it has already dropped the batch from its
    /// sources, so from here on the batch drives itself from the consumer's demand.
    func fail(with error: APNSError) {
        failure = error
        failMore()
    }

    /// Answers the input with `failure` in chunks of at most `window` while the consumer wants more,
    /// so a long remaining input is never held in memory at once.
    private func failMore() {
        guard let failure else { return }
        draining: while consumerWantsMore && !isCancelled && !inputEnded && !inputWaiting {
            // Outcomes already waiting (requests the pool failed) count towards the chunk.
            while pending.count < window {
                switch input.next() {
                case .push(let push):
                    pending.append(APNSPushOutcome(index: nextIndex, push: push, result: .failure(failure)))
                    metrics.recordOutcome(push.kind, .failure(failure))
                    nextIndex += 1
                case .waiting:
                    inputWaiting = true
                    break draining
                case .end:
                    inputEnded = true
                    break draining
                }
            }
            flushOutcomes()
        }
        flushOutcomes()
    }
}

/// Hops the consumer's signals onto the pool's event loop.
struct APNSPushBatchDelegate: NIOAsyncSequenceProducerDelegate {
    let eventLoop: any EventLoop
    let onProduceMore: @Sendable () -> Void
    let onTerminate: @Sendable () -> Void

    func produceMore() {
        eventLoop.execute(onProduceMore)
    }

    func didTerminate() {
        eventLoop.execute(onTerminate)
    }
}
