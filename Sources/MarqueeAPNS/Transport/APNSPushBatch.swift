import NIOCore

/// A fan-out: the pool pulls pushes from the caller's sequence while the batch's window and the
/// consumer allow, and outcomes go back in chunks through a back-pressured async sequence. No task
/// and no continuation per push; all bookkeeping runs on the pool's event loop.
final class APNSPushBatch<Pushes: Sequence & Sendable>: APNSRequestSource, APNSResponseSink, @unchecked Sendable
where Pushes.Element == APNSDevicePush {
    // @unchecked: created off the loop, then touched only on the pool's event loop (the delegate hops
    // there before touching it).

    typealias Producer = NIOAsyncSequenceProducer<
        [APNSPushOutcome], NIOAsyncSequenceProducerBackPressureStrategies.HighLowWatermark, APNSPushBatchDelegate
    >

    private let pushes: Pushes
    private var iterator: Pushes.Iterator?
    private let window: Int
    private var nextIndex = 0
    private var outstanding = 0
    private var inputExhausted = false
    private var consumerWantsMore = true
    private var pending: [APNSPushOutcome] = []
    private var producerSource: Producer.Source?
    private var finished = false
    private(set) var isCancelled = false

    init(pushes: Pushes, window: Int) {
        self.pushes = pushes
        self.window = window
    }

    func attach(_ source: Producer.Source) {
        producerSource = source
    }

    var isPaused: Bool { !consumerWantsMore || outstanding >= window }

    func nextRequest() -> APNSRequestSourceStep {
        if isCancelled || inputExhausted { return .exhausted }
        if isPaused { return .paused }
        if iterator == nil { iterator = pushes.makeIterator() }
        guard let push = iterator?.next() else {
            inputExhausted = true
            finishIfDone()
            return .exhausted
        }
        let index = nextIndex
        nextIndex += 1
        outstanding += 1
        return .request(APNSQueuedRequest(operation: .device(push), sink: self, tag: index))
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
            case .produceMore: consumerWantsMore = true
            case .stopProducing: consumerWantsMore = false
            case .dropped: isCancelled = true
            }
        }
        finishIfDone()
    }

    private func finishIfDone() {
        guard !finished, (inputExhausted || isCancelled), outstanding == 0, pending.isEmpty else { return }
        finished = true
        producerSource?.finish()
    }

    /// The consumer asked for more after the batch paused.
    func resume(pool: APNSConnectionPool) {
        consumerWantsMore = true
        pool.dispatch()
    }

    /// The consumer stopped iterating: queued pushes are dropped, nothing new is pulled.
    func cancel() {
        isCancelled = true
        pending = []
        finishIfDone()
    }

    func poolShutDown() {
        fail(with: .clientShutDown)
    }

    func fail(with error: APNSError) {
        if iterator == nil { iterator = pushes.makeIterator() }
        if !isCancelled && !inputExhausted {
            while let push = iterator?.next() {
                pending.append(APNSPushOutcome(index: nextIndex, push: push, result: .failure(error)))
                nextIndex += 1
            }
        }
        inputExhausted = true
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
