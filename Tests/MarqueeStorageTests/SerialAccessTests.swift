import Synchronization
import Testing

@testable import MarqueeStorage

@Suite("Serial access to the SQLite connection")
struct SerialAccessTests {
    /// Counts the callers inside the lock.
    final class Occupancy: Sendable {
        private let counts = Mutex((inside: 0, most: 0))

        func enter() {
            counts.withLock {
                $0.inside += 1
                $0.most = max($0.most, $0.inside)
            }
        }
        func leave() { counts.withLock { $0.inside -= 1 } }
        var most: Int { counts.withLock { $0.most } }
    }

    @Test("callers run one at a time")
    func exclusive() async throws {
        let access = SerialAccess()
        let occupancy = Occupancy()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    try await access.withAccess {
                        occupancy.enter()
                        await Task.yield()
                        occupancy.leave()
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(occupancy.most == 1)
    }

    @Test("a waiter that is cancelled leaves the queue and the lock still passes on")
    func cancelledWaiter() async throws {
        let access = SerialAccess()
        let (entered, enteredContinuation) = AsyncStream.makeStream(of: Void.self)
        let (release, releaseContinuation) = AsyncStream.makeStream(of: Void.self)
        let holder = Task {
            try await access.withAccess {
                enteredContinuation.yield()
                for await _ in release { break }
            }
        }
        for await _ in entered { break }
        let waiter = Task { try await access.withAccess { 1 } }
        await Task.yield()
        waiter.cancel()
        await #expect(throws: CancellationError.self) { _ = try await waiter.value }
        releaseContinuation.yield()
        try await holder.value
        #expect(try await access.withAccess { 2 } == 2)
    }
}
