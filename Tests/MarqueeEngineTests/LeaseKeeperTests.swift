import Foundation
import MarqueeCore
import Testing

@testable import MarqueeEngine

/// When a fan-out run renews its lease, until when it may hand sends to APNs, and when it gives the
/// lease up: pure decisions on an injected time.
@Suite("Lease keeper")
struct LeaseKeeperTests {
    let leasedAt = Date(timeIntervalSince1970: 1_767_225_600)
    /// A 30 s lease: renewed every 10 s, sends stop 6 s before it could lapse; 60 s without progress is a stall.
    let configuration = LeaseKeeper.Configuration(leaseDuration: .seconds(30), stallTimeout: .seconds(60))

    func keeper() -> LeaseKeeper {
        LeaseKeeper(configuration: configuration, leaseExpiresAt: leasedAt.addingTimeInterval(30), now: leasedAt)
    }

    func at(_ seconds: TimeInterval) -> Date { leasedAt.addingTimeInterval(seconds) }

    @Test(
        "a lease is renewed a third of the way through, once at a time, and each renewal counts from when it was asked"
    )
    func renewsAhead() {
        var keeper = keeper()
        #expect(keeper.verdict(now: at(9.9)) == .carryOn)
        #expect(keeper.verdict(now: at(10)) == .renew)
        keeper.renewalAsked(at: at(10))
        // One renewal at a time, however long it takes.
        #expect(keeper.verdict(now: at(15)) == .carryOn)
        keeper.progressed(at: at(15))
        // Answered late: the lease runs from the asking (10 s), not the answer.
        keeper.renewalSucceeded(askedAt: at(10))
        #expect(keeper.validUntil == at(10 + 30 - 6))
        #expect(keeper.verdict(now: at(19.9)) == .carryOn)
        #expect(keeper.verdict(now: at(20)) == .renew)
    }

    @Test("sends may go out until a fifth of a lease before it could lapse, and not after")
    func validityWithMargin() {
        var keeper = keeper()
        #expect(keeper.mayHandOutSends(now: at(23.9)))
        #expect(!keeper.mayHandOutSends(now: at(24)))
        // The page source may find this before the watch does: the hand-back says why.
        #expect(keeper.sendingStopped(now: at(24)) == .lapsing(.renewalNotAsked(for: .seconds(14))))
        // The renewal due at 10 s was never asked: the run's watch did not get to run.
        #expect(keeper.verdict(now: at(24)) == .abandon(.lapsing(.renewalNotAsked(for: .seconds(14)))))
        // A renewal that succeeds extends it from its asking time.
        keeper.renewalAsked(at: at(12))
        keeper.renewalSucceeded(askedAt: at(12))
        #expect(keeper.mayHandOutSends(now: at(35.9)))
        #expect(!keeper.mayHandOutSends(now: at(36)))
    }

    @Test("a renewal that never answers stops the run before the lease could lapse")
    func hangingRenewal() {
        var keeper = keeper()
        keeper.renewalAsked(at: at(10))
        keeper.progressed(at: at(23))
        #expect(keeper.verdict(now: at(23)) == .carryOn)
        #expect(keeper.verdict(now: at(24)) == .abandon(.lapsing(.renewalUnanswered(for: .seconds(14)))))
    }

    @Test("a failed renewal stops the handing out of sends at once; the lease still holds for the commits")
    func failedRenewal() {
        var keeper = keeper()
        keeper.renewalAsked(at: at(10))
        keeper.renewalFailed("serverClosedConnection")
        #expect(!keeper.mayHandOutSends(now: at(10)))
        #expect(keeper.verdict(now: at(10)) == .stopSending(.renewalFailed("serverClosedConnection")))
        // No more renewals; at the margin, the run stops at once.
        #expect(keeper.verdict(now: at(20)) == .stopSending(.renewalFailed("serverClosedConnection")))
        #expect(keeper.verdict(now: at(24)) == .abandon(.lapsing(.renewalFailed("serverClosedConnection"))))
    }

    @Test("a refused renewal (cancelled, or taken over) stops the run at once")
    func refusedRenewal() {
        var keeper = keeper()
        keeper.renewalAsked(at: at(10))
        keeper.renewalRefused()
        #expect(!keeper.mayHandOutSends(now: at(10)))
        #expect(keeper.verdict(now: at(10)) == .abandon(.refused))
    }

    @Test("a run without progress for the stall timeout gives its lease up, however well its renewals go")
    func stall() {
        var keeper = keeper()
        var now: TimeInterval = 0
        // Renewals keep succeeding: the lease alone is no sign of life.
        while now < 60 {
            if keeper.verdict(now: at(now)) == .renew {
                keeper.renewalAsked(at: at(now))
                keeper.renewalSucceeded(askedAt: at(now))
            }
            #expect(keeper.verdict(now: at(now)) != .abandon(.stalled(.seconds(60))))
            now += 1
        }
        #expect(keeper.verdict(now: at(60)) == .abandon(.stalled(.seconds(60))))
    }

    @Test("progress, and a wait for a scheduled retry, keep the stall timeout away")
    func progressDefersStall() {
        var keeper = keeper()
        keeper.renewalAsked(at: at(10))
        keeper.renewalSucceeded(askedAt: at(10))
        keeper.renewalAsked(at: at(20))
        keeper.renewalSucceeded(askedAt: at(20))
        keeper.renewalAsked(at: at(30))
        keeper.renewalSucceeded(askedAt: at(30))
        keeper.progressed(at: at(50))
        keeper.renewalAsked(at: at(40))
        keeper.renewalSucceeded(askedAt: at(40))
        keeper.renewalAsked(at: at(50))
        keeper.renewalSucceeded(askedAt: at(50))
        #expect(keeper.verdict(now: at(109.9)) != .abandon(.stalled(.seconds(60))))
        // A retry due at 200 s: idle until then on purpose.
        keeper.progressed(at: at(200))
        keeper.renewalAsked(at: at(100))
        keeper.renewalSucceeded(askedAt: at(100))
        #expect(keeper.verdict(now: at(109)) == .carryOn)
        #expect(keeper.verdict(now: at(110)) == .renew)
    }
}
