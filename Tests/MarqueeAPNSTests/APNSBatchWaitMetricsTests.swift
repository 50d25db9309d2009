import MarqueeAPNS
import MarqueeCore
import MarqueeEmulator
import MarqueeTesting
import MetricsTestKit
import NIOCore
import Testing

/// Pages given one at a time: the first at once, each later one when the test opens its gate.
struct GatedPages: AsyncSequence, Sendable {
    typealias Element = [APNSDevicePush]

    let pages: [[APNSDevicePush]]
    let gates: AsyncStream<Void>
    let opener: AsyncStream<Void>.Continuation

    init(pages: [[APNSDevicePush]]) {
        self.pages = pages
        (gates, opener) = AsyncStream.makeStream()
    }

    /// Lets the source give its next page.
    func open() { opener.yield() }

    struct AsyncIterator: AsyncIteratorProtocol {
        let source: GatedPages
        var gates: AsyncStream<Void>.Iterator
        var position = 0

        mutating func next() async throws -> [APNSDevicePush]? {
            guard position < source.pages.count else { return nil }
            if position > 0 { _ = await gates.next() }
            defer { position += 1 }
            return source.pages[position]
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(source: self, gates: gates.makeAsyncIterator()) }
}

@Suite("Where a batch waits, in its metrics")
struct APNSBatchWaitMetricsTests {
    static let body = ByteBuffer(string: #"{"aps":{"timestamp":1767225600,"event":"update","content-state":{}}}"#)

    /// The waits of the sandbox's batches on `what` ("source" or "consumer") recorded so far, in
    /// nanoseconds; none before the first.
    static func batchWaits(_ metrics: TestMetrics, on what: String) -> [Int64] {
        (try? metrics.expectTimer("marquee_apns_batch_wait_seconds", [("environment", "sandbox"), ("on", what)]))?
            .values ?? []
    }

    @Test("a page that is late while the connections have room counts as a wait on the source")
    func latePageIsAWaitOnTheSource() async throws {
        let metrics = TestMetrics()
        try await withEmulatorClient(metrics: metrics) { fixture in
            let device = try fixture.emulator.registerDevice(environment: .sandbox, bundleID: fixture.bundleID)
            let pages = try (0..<2).map { _ in
                try (0..<20).map { _ in
                    try APNSDevicePush(deviceToken: device.deviceToken, bundleID: fixture.bundleID, payload: Self.body)
                }
            }
            let source = GatedPages(pages: pages)
            var outcomes = fixture.client.send(pages: source).makeAsyncIterator()
            var received = 0
            // Every push of the first page answered: the pool has asked the batch for the next push
            // since, and the batch has had nothing to give.
            while received < 20, let chunk = try await outcomes.next() { received += chunk.count }
            #expect(received == 20)
            let waitsBefore = Self.batchWaits(metrics, on: "source").count

            source.open()
            while let chunk = try await outcomes.next() { received += chunk.count }
            #expect(received == 40)

            let waits = Self.batchWaits(metrics, on: "source")
            // The wait is counted when it ends: the page's arrival.
            #expect(waits.count > waitsBefore)
            #expect(waits.allSatisfy { $0 >= 0 })
            // The consumer read as fast as the batch answered: it held nothing back.
            #expect(Self.batchWaits(metrics, on: "consumer").isEmpty)
        }
    }

    @Test("outcomes left unread until the batch stops count as a wait on the consumer once it reads again")
    func unreadOutcomesAreAWaitOnTheConsumer() async throws {
        let metrics = TestMetrics()
        // Two chunks unread stop the batch (the high watermark); none unread lets it go on (the low).
        let transport = APNSClientConfiguration.Transport(connectionsPerEndpoint: 1, batchBufferedChunks: 2)
        try await withEmulatorClient(transport: transport, metrics: metrics) { fixture in
            let device = try fixture.emulator.registerDevice(environment: .sandbox, bundleID: fixture.bundleID)
            // A push a page, each page given once the push before it is answered: every answer
            // comes in a read of its own, and its outcome in a chunk of its own.
            let pages = try (0..<4).map { _ in
                [try APNSDevicePush(deviceToken: device.deviceToken, bundleID: fixture.bundleID, payload: Self.body)]
            }
            let source = GatedPages(pages: pages)
            let accepted = try metrics.expectCounter(
                "marquee_apns_pushes_total",
                [("kind", "update"), ("outcome", "accepted"), ("reason", "none")]
            )
            var outcomes = fixture.client.send(pages: source).makeAsyncIterator()
            for answered in 1...2 {
                try await waitUntil("push \(answered) answered") { accepted.totalValue >= Int64(answered) }
                source.open()
            }
            // The third page reached the batch after the read that answered the second push, whose
            // chunk was the second unread one: the batch had stopped by then, the page at hand.
            try await waitUntil("the third page taken") { Self.batchWaits(metrics, on: "source").count >= 2 }
            #expect(Self.batchWaits(metrics, on: "consumer").isEmpty)
            #expect(accepted.totalValue == 2)

            // The wait is counted when it ends: the consumer asking for more.
            var received = 0
            while received < 2, let chunk = try await outcomes.next() { received += chunk.count }
            try await waitUntil("push 3 answered") { accepted.totalValue >= 3 }
            let consumerWaits = Self.batchWaits(metrics, on: "consumer")
            #expect(consumerWaits.count >= 1)
            #expect(consumerWaits.allSatisfy { $0 >= 0 })

            source.open()
            while let chunk = try await outcomes.next() { received += chunk.count }
            #expect(received == 4)
        }
    }
}
