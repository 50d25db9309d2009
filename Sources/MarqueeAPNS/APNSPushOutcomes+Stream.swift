import NIOCore
import NIOPosix
import Synchronization

/// Outcome sequences made from values rather than from a connection: what a stand-in
/// for `APNSClient` (an engine test's fake APNs) returns from the same calls. The client itself
/// never uses these.
extension APNSPushOutcomes {
    /// The outcomes `chunks` gives, in its order. Abandoning the iteration ends the stream's task.
    public init(chunks: AsyncStream<[APNSPushOutcome]>) {
        self.init(producer: Self.producer(pumping: chunks, then: {}))
    }

    /// A producer fed by `chunks`; `finally` runs after the last chunk, before the sequence ends.
    static func producer(
        pumping chunks: AsyncStream<[APNSPushOutcome]>,
        then finally: @escaping @Sendable () -> Void
    ) -> Producer {
        let pump = Mutex<Task<Void, Never>?>(nil)
        let delegate = APNSPushBatchDelegate(
            eventLoop: MultiThreadedEventLoopGroup.singleton.any(),
            onProduceMore: {},
            onTerminate: { pump.withLock { $0?.cancel() } }
        )
        let made = Producer.makeSequence(
            backPressureStrategy: .init(lowWatermark: 1, highWatermark: 4),
            finishOnDeinit: false,
            delegate: delegate
        )
        let source = made.source
        // Back pressure is not kept: a stand-in's chunks are few and already in memory.
        let task = Task {
            for await chunk in chunks { _ = source.yield(contentsOf: [chunk]) }
            finally()
            source.finish()
        }
        pump.withLock { $0 = task }
        return made.sequence
    }
}

extension APNSPagedPushOutcomes {
    /// The outcomes `chunks` gives; after its last one, the sequence throws what `failure` returns
    /// then (a page source that failed after giving some pushes), or ends if it returns `nil`.
    public init(
        chunks: AsyncStream<[APNSPushOutcome]>,
        failure: @escaping @Sendable () -> APNSPushSourceError<SourceFailure>?
    ) {
        let slot = APNSPushSourceFailureSlot<SourceFailure>()
        let producer = APNSPushOutcomes.producer(pumping: chunks) {
            if let error = failure() { slot.store(error) }
        }
        self.init(producer: producer, failure: slot)
    }
}
