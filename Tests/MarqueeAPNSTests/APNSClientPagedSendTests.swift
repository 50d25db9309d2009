import Foundation
import MarqueeAPNS
import MarqueeCore
import MarqueeEmulator
import NIOCore
import Synchronization
import Testing

/// Pages of pushes as a store would yield them, counting what was pulled.
struct CountedPages: AsyncSequence, Sendable {
    typealias Element = [APNSDevicePush]

    enum StoreFailure: Error, Equatable { case connectionLost }

    final class Counter: Sendable {
        let pagesPulled = Atomic(0)
        let cancelled = Atomic(false)
    }

    let pages: [[APNSDevicePush]]
    let counter = Counter()
    /// After the last page: end, throw, or hang until cancelled (a fetch that never returns).
    var after: After = .end
    enum After: Sendable { case end, fail, hang }

    struct AsyncIterator: AsyncIteratorProtocol {
        let source: CountedPages
        var position = 0

        mutating func next() async throws -> [APNSDevicePush]? {
            guard position < source.pages.count else {
                switch source.after {
                case .end:
                    return nil
                case .fail:
                    throw StoreFailure.connectionLost
                case .hang:
                    do {
                        try await Task.sleep(for: .seconds(3600))
                    } catch {
                        source.counter.cancelled.store(true, ordering: .relaxed)
                    }
                    return nil
                }
            }
            defer { position += 1 }
            source.counter.pagesPulled.add(1, ordering: .relaxed)
            return source.pages[position]
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(source: self) }
}

@Suite("Sending an audience that arrives in pages, against the emulator")
struct APNSClientPagedSendTests {
    static let body = ByteBuffer(string: #"{"aps":{"timestamp":1767225600,"event":"update","content-state":{}}}"#)

    /// `count` pages of `size` pushes to a few devices, each push with its own apns-id.
    func makePages(_ fixture: EmulatorFixture, count: Int, size: Int) throws -> [[APNSDevicePush]] {
        let devices = try (0..<10).map { _ in
            try fixture.emulator.registerDevice(environment: .sandbox, bundleID: fixture.bundleID)
        }
        return try (0..<count).map { page in
            try (0..<size).map { row in
                try APNSDevicePush(
                    deviceToken: devices[(page * size + row) % devices.count].deviceToken,
                    bundleID: fixture.bundleID,
                    payload: Self.body,
                    apnsID: UUID()
                )
            }
        }
    }

    @Test("every push of every page gets one outcome; indices count across pages")
    func indicesAcrossPages() async throws {
        try await withEmulatorClient { fixture in
            let pages = try makePages(fixture, count: 10, size: 50)
            var byIndex: [Int: APNSPushOutcome] = [:]
            for try await chunk in fixture.client.send(pages: CountedPages(pages: pages), window: 64) {
                for outcome in chunk {
                    #expect(byIndex.updateValue(outcome, forKey: outcome.index) == nil)
                }
            }
            #expect(byIndex.count == 500)
            for (index, outcome) in byIndex {
                // APNs answers with the apns-id the push carried: the outcome at an index is that push's.
                switch outcome.result {
                case .success(let result):
                    #expect(result.apnsID == pages[index / 50][index % 50].apnsID?.uuidString.lowercased())
                case .failure(let error):
                    Issue.record("push \(index) failed: \(error)")
                }
            }
            #expect(fixture.emulator.counters.devicePushesAccepted == 500)
        }
    }

    @Test("empty pages and an empty source are fine: the outcomes simply end")
    func emptyPages() async throws {
        try await withEmulatorClient { fixture in
            var total = 0
            for try await chunk in fixture.client.send(pages: CountedPages(pages: [])) { total += chunk.count }
            let some = try makePages(fixture, count: 1, size: 3)
            for try await chunk in fixture.client.send(pages: CountedPages(pages: [[], some[0], []])) {
                total += chunk.count
            }
            #expect(total == 3)
        }
    }

    @Test("a consumer that stops reading holds the page source back: only a few pages are pulled ahead")
    func backPressureReachesTheSource() async throws {
        var transport = APNSClientConfiguration.Transport()
        transport.batchBufferedChunks = 2
        try await withEmulatorClient(transport: transport) { fixture in
            let source = CountedPages(pages: try makePages(fixture, count: 200, size: 10))
            var outcomes = fixture.client.send(pages: source, window: 10).makeAsyncIterator()
            var received = try await outcomes.next()?.count ?? 0
            // Let the batch run into the back-pressure and stay there.
            try await Task.sleep(for: .milliseconds(500))
            let pulledWhileStalled = source.counter.pagesPulled.load(ordering: .relaxed)
            // Outcomes in flight or buffered (window + 2 chunks of at most a window), the page being
            // sent and the pages allowed ahead: a handful of pages, not the 200 of the audience.
            #expect(pulledWhileStalled <= 10)
            while let chunk = try await outcomes.next() { received += chunk.count }
            #expect(received == 2_000)
            let pulledInAll = source.counter.pagesPulled.load(ordering: .relaxed)
            #expect(pulledInAll == 200)
        }
    }

    @Test("a source that throws ends the outcomes with APNSPushSourceError after every outcome of what it gave")
    func sourceFailureIsTyped() async throws {
        try await withEmulatorClient { fixture in
            var source = CountedPages(pages: try makePages(fixture, count: 3, size: 10))
            source.after = .fail
            var outcomes = fixture.client.send(pages: source).makeAsyncIterator()
            var indices = Set<Int>()
            let error = await #expect(throws: APNSPushSourceError<any Error>.self) {
                while let chunk = try await outcomes.next() {
                    for outcome in chunk { indices.insert(outcome.index) }
                }
            }
            #expect(indices == Set(0..<30))
            #expect(error?.pushCount == 30)
            #expect(error?.underlying as? CountedPages.StoreFailure == .connectionLost)
            // Thrown once; the sequence is over.
            let isOver = try await outcomes.next() == nil
            #expect(isOver)
        }
    }

    @Test("abandoning the outcomes stops pulling pages and cancels a fetch in progress")
    func abandoningCancelsTheSource() async throws {
        try await withEmulatorClient { fixture in
            var source = CountedPages(pages: try makePages(fixture, count: 1, size: 5))
            source.after = .hang
            do {
                var outcomes = fixture.client.send(pages: source).makeAsyncIterator()
                _ = try await outcomes.next()
            }
            // The iterator is gone; its batch cancels the page task, whose fetch was hanging.
            var cancelled = false
            for _ in 0..<200 where !cancelled {
                try await Task.sleep(for: .milliseconds(10))
                cancelled = source.counter.cancelled.load(ordering: .relaxed)
            }
            #expect(cancelled)
            let pulled = source.counter.pagesPulled.load(ordering: .relaxed)
            #expect(pulled == 1)
        }
    }
}
