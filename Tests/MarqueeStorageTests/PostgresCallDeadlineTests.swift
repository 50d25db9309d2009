import MarqueeCore
import Synchronization
import Testing

@testable import MarqueeStorage

/// The deadline on the store's calls to PostgreSQL, with calls that answer, fail, or never answer.
@Suite struct PostgresCallDeadlineTests {
    @Test func aCallThatAnswersInTimeGivesItsAnswer() async throws {
        let deadline = PostgresCallDeadline(limit: .seconds(300))
        #expect(try await deadline.run { 42 } == 42)
    }

    @Test func aCallThatFailsInTimeGivesItsOwnError() async throws {
        let deadline = PostgresCallDeadline(limit: .seconds(300))
        await #expect(throws: StoreError.notFound(entity: "job", id: "j")) {
            try await deadline.run { () async throws -> Int in throw StoreError.notFound(entity: "job", id: "j") }
        }
    }

    @Test func aCallThatNeverAnswersIsAnsweredByTheDeadlineAndCancelled() async throws {
        let deadline = PostgresCallDeadline(limit: .milliseconds(50))
        let lostCall = LostCall()
        await #expect(throws: StoreCallTimedOut(limit: .milliseconds(50))) {
            try await deadline.run { await lostCall.waitForever() }
        }
        // The abandoned call was told to stop (a lost query ignores it; this one just records it).
        try await waitUntilCancelled(lostCall)
    }

    @Test func callsThatAnswerLeaveNoDeadlineWatched() async throws {
        let deadline = PostgresCallDeadline(limit: .seconds(300))
        try await withThrowingTaskGroup(of: Int.self) { group in
            for value in 0..<200 { group.addTask { try await deadline.run { value } } }
            let sum = try await group.reduce(0, +)
            #expect(sum == (0..<200).reduce(0, +))
        }
        #expect(deadline.callsWatched == 0)
    }

    @Test func lostCallsStartedAtDifferentTimesEachReachTheirDeadline() async throws {
        // One timer watches every call: after the first lost call's deadline it is armed again for
        // the second's, which started later.
        let deadline = PostgresCallDeadline(limit: .milliseconds(50))
        let first = LostCall()
        let second = LostCall()
        let firstCaller = Task { try await deadline.run { await first.waitForever() } }
        try await first.started()
        let secondCaller = Task { try await deadline.run { await second.waitForever() } }
        await #expect(throws: StoreCallTimedOut(limit: .milliseconds(50))) { try await firstCaller.value }
        await #expect(throws: StoreCallTimedOut(limit: .milliseconds(50))) { try await secondCaller.value }
        try await waitUntilCancelled(second)
        #expect(deadline.callsWatched == 0)
    }

    @Test func cancellingTheCallerCancelsTheCall() async throws {
        let deadline = PostgresCallDeadline(limit: .seconds(300))
        let call = LostCall()
        let caller = Task { try await deadline.run { try await call.waitUntilCancelled() } }
        try await call.started()
        caller.cancel()
        await #expect(throws: CancellationError.self) { try await caller.value }
    }

    private func waitUntilCancelled(_ call: LostCall) async throws {
        while !call.wasCancelled { try await Task.sleep(for: .milliseconds(5)) }
    }
}

/// A call that never answers by itself: it records being cancelled, as a lost PostgreSQL query does not.
private final class LostCall: Sendable {
    private let state = Mutex((started: false, cancelled: false))

    var wasCancelled: Bool { state.withLock { $0.cancelled } }

    func waitForever() async -> Int {
        state.withLock { $0.started = true }
        let (never, _) = AsyncStream<Int>.makeStream()
        await withTaskCancellationHandler {
            for await _ in never {}
        } onCancel: {
            self.state.withLock { $0.cancelled = true }
        }
        // Still no answer after the cancellation: a lost call.
        let (forever, keep) = AsyncStream<Int>.makeStream()
        _ = keep
        for await _ in forever {}
        return 0
    }

    func waitUntilCancelled() async throws -> Int {
        state.withLock { $0.started = true }
        while !Task.isCancelled { try await Task.sleep(for: .milliseconds(5)) }
        throw CancellationError()
    }

    func started() async throws {
        while !state.withLock({ $0.started }) { try await Task.sleep(for: .milliseconds(5)) }
    }
}
