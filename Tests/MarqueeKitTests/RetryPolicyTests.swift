import Foundation
import MarqueeKit
import Testing

/// When a failed request is tried again.
@Suite("Retry decision")
struct RetryPolicyTests {
    let policy = RetryPolicy(
        maxAttempts: 4,
        initialBackoff: .seconds(1),
        longestWait: .seconds(20),
        jitter: .seconds(1)
    )
    let now = Date(timeIntervalSince1970: 1_795_000_000)

    func rejected(_ status: Int, retryAfter: RetryAfter? = nil) -> MarqueeKitError {
        .rejected(MarqueeRejection(status: status, problem: nil, retryAfter: retryAfter))
    }

    @Test("Retry-After in seconds is waited out whole, with the jitter on top, never less")
    func retryAfterSeconds() {
        #expect(
            policy.decide(after: rejected(429, retryAfter: .seconds(7)), attempt: 1, now: now, randomFraction: 0)
                == .retry(after: .seconds(7))
        )
        #expect(
            policy.decide(after: rejected(429, retryAfter: .seconds(7)), attempt: 1, now: now, randomFraction: 0.5)
                == .retry(after: .milliseconds(7500))
        )
        #expect(
            policy.decide(after: rejected(503, retryAfter: .seconds(2)), attempt: 3, now: now, randomFraction: 0)
                == .retry(after: .seconds(2))
        )
    }

    @Test("Retry-After as an HTTP date counts from now; a date past means at once")
    func retryAfterDate() throws {
        let header = try #require(RetryAfter(header: "Sun, 22 Nov 2026 08:26:52 GMT"))
        let date = try #require({ if case .date(let date) = header { date } else { nil } }())
        #expect(
            policy.decide(
                after: rejected(429, retryAfter: header),
                attempt: 1,
                now: date.addingTimeInterval(-12),
                randomFraction: 0
            ) == .retry(after: .seconds(12))
        )
        #expect(
            policy.decide(
                after: rejected(429, retryAfter: header),
                attempt: 1,
                now: date.addingTimeInterval(60),
                randomFraction: 0
            ) == .retry(after: .zero)
        )
    }

    @Test("Retry-After's forms are read; anything else is no Retry-After")
    func retryAfterHeader() {
        #expect(RetryAfter(header: "120") == .seconds(120))
        #expect(RetryAfter(header: " 3 ") == .seconds(3))
        #expect(RetryAfter(header: "-1") == nil)
        #expect(RetryAfter(header: "soon") == nil)
        #expect(RetryAfter(header: "Sun, 06 Nov 1994 08:49:37 GMT") == .date(Date(timeIntervalSince1970: 784_111_777)))
    }

    @Test("a wait longer than the policy takes is not waited: the next reconciliation sends it")
    func tooLongAWait() {
        #expect(
            policy.decide(after: rejected(429, retryAfter: .seconds(21)), attempt: 1, now: now, randomFraction: 0)
                == .giveUp
        )
        #expect(
            policy.decide(after: rejected(429, retryAfter: .seconds(20)), attempt: 1, now: now, randomFraction: 0.99)
                == .retry(after: .milliseconds(20990))
        )
    }

    @Test("without Retry-After the wait doubles from the first, up to the longest")
    func backoff() {
        let long = RetryPolicy(maxAttempts: 10, initialBackoff: .seconds(1), longestWait: .seconds(5), jitter: .zero)
        let waits = (1...5).map {
            long.decide(after: .unreachable("timed out"), attempt: $0, now: now, randomFraction: 0.7)
        }
        #expect(
            waits == [
                .retry(after: .seconds(1)), .retry(after: .seconds(2)), .retry(after: .seconds(4)),
                .retry(after: .seconds(5)), .retry(after: .seconds(5)),
            ]
        )
    }

    @Test(
        "what time can mend is tried again; what a person must mend is not",
        arguments: [
            (408, true), (429, true), (500, true), (502, true), (503, true), (504, true),
            (400, false), (401, false), (403, false), (404, false), (409, false), (413, false), (422, false),
        ]
    )
    func transientStatuses(status: Int, retried: Bool) {
        let decision = policy.decide(after: rejected(status), attempt: 1, now: now, randomFraction: 0)
        #expect((decision != .giveUp) == retried)
    }

    @Test("the attempts are bounded; an argument Marquee would refuse is never sent again")
    func bounded() {
        #expect(
            policy.decide(after: .unreachable("offline"), attempt: 3, now: now, randomFraction: 0)
                == .retry(after: .seconds(4))
        )
        #expect(policy.decide(after: .unreachable("offline"), attempt: 4, now: now, randomFraction: 0) == .giveUp)
        #expect(policy.decide(after: .invalidArgument("bad key"), attempt: 1, now: now, randomFraction: 0) == .giveUp)
    }
}
