import Crypto
import Foundation
import MarqueeAPNS
import MarqueeCore
import NIOCore
import Synchronization
import Testing

/// A long audience made lazily, counting how much of it was pulled.
struct LazyAudience: Sequence, Sendable {
    final class Counter: Sendable { let pulled = Atomic(0) }

    let push: APNSDevicePush
    let count: Int
    let counter = Counter()

    func makeIterator() -> AnyIterator<APNSDevicePush> {
        var remaining = count
        let counter = self.counter
        let push = self.push
        return AnyIterator {
            guard remaining > 0 else { return nil }
            remaining -= 1
            counter.pulled.add(1, ordering: .relaxed)
            return push
        }
    }
}

@Suite("A batch the pool gives up on")
struct APNSPushBatchFailureTests {
    @Test(
        "with no connection possible, the rest of a huge audience is failed a chunk at a time, as the consumer asks",
        .timeLimit(.minutes(1))
    )
    func failsInChunks() async throws {
        var transport = APNSClientConfiguration.Transport()
        transport.batchBufferedChunks = 2
        let client = try APNSClient(
            configuration: APNSClientConfiguration(
                environment: .sandbox,
                signingKey: APNSSigningKey(privateKey: .init(), keyID: "ABC123DEFG", teamID: "DEF123GHIJ"),
                pushEndpoint: APNSEndpoint(host: "127.0.0.1", port: 1, security: .cleartext),
                retryPolicy: testRetryPolicy,
                transport: transport
            )
        )
        let push = try APNSDevicePush(deviceToken: "ab", bundleID: "b", payload: ByteBuffer(string: #"{"aps":{}}"#))
        // Ten million: materialised at once, its outcomes would take gigabytes and many seconds.
        let audience = LazyAudience(push: push, count: 10_000_000)
        var outcomes = client.send(audience, window: 10).makeAsyncIterator()
        var failed = 0
        for _ in 0..<5 {
            let chunk = try #require(await outcomes.next())
            #expect(chunk.count <= 10)
            for outcome in chunk {
                guard case .failure(.connectionFailed) = outcome.result else {
                    Issue.record("expected connectionFailed, got \(outcome.result)")
                    continue
                }
                failed += 1
            }
        }
        #expect(failed > 0)
        try await Task.sleep(for: .milliseconds(200))
        // What was read, two buffered chunks and one being made, of at most a window each.
        let pulled = audience.counter.pulled.load(ordering: .relaxed)
        #expect(pulled <= failed + 3 * 10)
        await client.shutdown()
    }
}
