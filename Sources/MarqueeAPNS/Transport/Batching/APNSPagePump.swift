import NIOCore

/// The one task of a paged batch: pulls pages from the caller's `AsyncSequence` and hands each to
/// the batch on the pool's event loop, waiting for room before fetching the next. A task per batch,
/// a hop and at most one promise per page; nothing per push.
enum APNSPagePump {
    static func run<Pages: AsyncSequence & Sendable>(
        _ pages: Pages,
        into batch: APNSPushBatch<APNSPageInput>,
        pool: APNSConnectionPool,
        failure: APNSPushSourceFailureSlot<Pages.Failure>
    ) async where Pages.Element == [APNSDevicePush] {
        let eventLoop = pool.eventLoop
        var iterator = pages.makeAsyncIterator()
        var pushCount = 0
        do {
            while let page = try await iterator.next(isolation: nil) {
                pushCount += page.count
                let mayFetchMore = eventLoop.flatSubmit { batch.receive(page, pool: pool) }
                // `false`: the batch was abandoned or finished; its outcomes have no reader.
                guard (try? await mayFetchMore.get()) == true else { return }
            }
        } catch {
            failure.store(APNSPushSourceError(underlying: error, pushCount: pushCount))
        }
        eventLoop.execute { batch.sourceEnded(pool: pool) }
    }
}
