import NIOCore

/// The outcomes of a batch, in chunks as connections deliver them (not in input order; each carries
/// its index). Iterating slowly makes the batch send more slowly; abandoning the iteration stops it.
public struct APNSPushOutcomes: AsyncSequence, Sendable {
    public typealias Element = [APNSPushOutcome]

    typealias Producer = NIOAsyncSequenceProducer<
        [APNSPushOutcome], NIOAsyncSequenceProducerBackPressureStrategies.HighLowWatermark, APNSPushBatchDelegate
    >

    let producer: Producer

    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: Producer.AsyncIterator

        public mutating func next() async -> [APNSPushOutcome]? {
            await base.next()
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: producer.makeAsyncIterator())
    }
}
