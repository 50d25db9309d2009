import MarqueeCore
import Testing

@testable import MarqueeEngine

/// A batch whose commit failed is committed again (its outcomes are in memory) rather than the run
/// failing and its window being sent again.
@Suite("Committing a batch again")
struct CommitRetryPolicyTests {
    struct Unreachable: Error {}

    let policy = CommitRetryPolicy(patience: .seconds(30))

    @Test("a store that is unreachable is tried again after pauses that double up to two seconds")
    func growingPauses() {
        let pauses = (1...7).map { policy.delay(afterFailures: $0, error: Unreachable(), elapsed: .seconds(1)) }
        #expect(
            pauses == [
                .milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800), .milliseconds(1600),
                .seconds(2), .seconds(2),
            ]
        )
    }

    @Test("past the lease's length the run gives up and fails as before")
    func patienceSpent() {
        #expect(policy.delay(afterFailures: 3, error: Unreachable(), elapsed: .seconds(29)) == .milliseconds(400))
        #expect(policy.delay(afterFailures: 9, error: Unreachable(), elapsed: .seconds(29)) == nil)
    }

    @Test("the store's refusals and cancellation are final")
    func finalErrors() {
        #expect(policy.delay(afterFailures: 1, error: StoreError.leaseLost(JobID()), elapsed: .zero) == nil)
        #expect(
            policy.delay(afterFailures: 1, error: StoreError.notFound(entity: "event", id: "x"), elapsed: .zero) == nil
        )
        #expect(policy.delay(afterFailures: 1, error: CancellationError(), elapsed: .zero) == nil)
    }
}
