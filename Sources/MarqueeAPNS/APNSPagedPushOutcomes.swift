import NIOCore

/// The outcomes of a batch fed by pages (`APNSClient.send(pages:window:)`), in chunks as connections
/// deliver them, not in input order. Each outcome's `index` counts pushes across pages: the first
/// push of the second page follows the last of the first.
///
/// Iterating slowly slows the batch and, through it, the page source; abandoning the iteration stops
/// both. The sequence throws only when the page source did, after the last outcome: the caller can
/// tell a source failure (`APNSPushSourceError`) from the pushes' own results.
public struct APNSPagedPushOutcomes<SourceFailure: Error>: AsyncSequence, Sendable {
    public typealias Element = [APNSPushOutcome]
    public typealias Failure = APNSPushSourceError<SourceFailure>

    let producer: APNSPushOutcomes.Producer
    let failure: APNSPushSourceFailureSlot<SourceFailure>

    public struct AsyncIterator: AsyncIteratorProtocol {
        public typealias Element = [APNSPushOutcome]
        public typealias Failure = APNSPushSourceError<SourceFailure>

        var base: APNSPushOutcomes.Producer.AsyncIterator
        let failure: APNSPushSourceFailureSlot<SourceFailure>

        public mutating func next() async throws(APNSPushSourceError<SourceFailure>) -> [APNSPushOutcome]? {
            if let chunk = await base.next() { return chunk }
            if let error = failure.take() { throw error }
            return nil
        }

    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: producer.makeAsyncIterator(), failure: failure)
    }
}
