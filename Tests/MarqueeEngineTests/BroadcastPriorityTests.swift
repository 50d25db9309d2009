import Foundation
import MarqueeAPNS
import MarqueeCore
import MarqueeEngine
import Testing

/// How a broadcast's priority and `apns-expiration` are chosen, without any I/O.
@Suite("Broadcast priority and expiration")
struct BroadcastPriorityTests {
    let now = Date(timeIntervalSince1970: 1_767_225_600)

    @Test("the standard policy sends important updates and updates with an alert at 10, the rest at 5")
    func standardPolicy() {
        let policy = PriorityPolicy.standard
        #expect(policy.requestedPriority(explicit: nil, important: false, hasAlert: false) == .normal)
        #expect(policy.requestedPriority(explicit: nil, important: true, hasAlert: false) == .immediate)
        #expect(policy.requestedPriority(explicit: nil, important: false, hasAlert: true) == .immediate)
        // A priority the request names wins over the policy.
        #expect(policy.requestedPriority(explicit: .low, important: false, hasAlert: true) == .low)
        #expect(policy.requestedPriority(explicit: .immediate, important: false, hasAlert: false) == .immediate)
    }

    @Test("the immediate and normal policies")
    func otherPolicies() {
        #expect(
            PriorityPolicy.immediate.requestedPriority(explicit: nil, important: false, hasAlert: false) == .immediate
        )
        #expect(PriorityPolicy.normal.requestedPriority(explicit: nil, important: false, hasAlert: true) == .normal)
        #expect(PriorityPolicy.normal.requestedPriority(explicit: nil, important: true, hasAlert: false) == .immediate)
    }

    @Test("within the budget 10 stays 10; at the limit it goes at 5 and says why")
    func budget() {
        let budget = PriorityBudget(limitPerHour: 3)
        let within = budget.decide(requested: .immediate, sentAtImmediateInWindow: 2)
        #expect(within.priority == .immediate && !within.downgraded)
        let spent = budget.decide(requested: .immediate, sentAtImmediateInWindow: 3)
        #expect(spent.priority == .normal)
        #expect(spent.requested == .immediate)
        #expect(spent.downgraded)
        #expect(spent.downgradeReason?.contains("3 priority-10") == true)
        // Priority 5 and 1 never touch the budget.
        #expect(
            budget.decide(requested: .normal, sentAtImmediateInWindow: 99)
                == PriorityDecision(requested: .normal, priority: .normal, downgradeReason: nil)
        )
        #expect(budget.decide(requested: .low, sentAtImmediateInWindow: 99).priority == .low)
    }

    @Test("a budget of 0 sends everything at 5")
    func zeroBudget() {
        #expect(
            PriorityBudget(limitPerHour: 0).decide(requested: .immediate, sentAtImmediateInWindow: 0).priority
                == .normal
        )
        #expect(PriorityBudget(limitPerHour: -4).limitPerHour == 0)
    }

    @Test("No Message Stored channels always get apns-expiration 0")
    func noStorage() {
        #expect(
            BroadcastExpiration.expiration(
                for: .noMessageStored,
                now: now,
                staleDate: now.addingTimeInterval(600),
                dismissalDate: nil
            ) == .immediately
        )
    }

    @Test(
        "stored channels keep the message up to 8 hours less a margin, or until the stale or dismissal date if earlier"
    )
    func stored() {
        let limit = now.addingTimeInterval(8 * 3600 - BroadcastExpiration.clockMargin)
        #expect(
            BroadcastExpiration.expiration(for: .mostRecentMessageStored, now: now, staleDate: nil, dismissalDate: nil)
                == .at(limit)
        )
        // A stale date beyond 8 hours does not stretch APNs' limit.
        #expect(
            BroadcastExpiration.expiration(
                for: .mostRecentMessageStored,
                now: now,
                staleDate: now.addingTimeInterval(12 * 3600),
                dismissalDate: nil
            ) == .at(limit)
        )
        let stale = now.addingTimeInterval(900)
        let dismissal = now.addingTimeInterval(300)
        #expect(
            BroadcastExpiration.expiration(
                for: .mostRecentMessageStored,
                now: now,
                staleDate: stale,
                dismissalDate: nil
            ) == .at(stale)
        )
        #expect(
            BroadcastExpiration.expiration(
                for: .mostRecentMessageStored,
                now: now,
                staleDate: stale,
                dismissalDate: dismissal
            )
                == .at(dismissal)
        )
        // Already dismissed (a past dismissal date removes the activity at once): nothing to keep.
        #expect(
            BroadcastExpiration.expiration(
                for: .mostRecentMessageStored,
                now: now,
                staleDate: nil,
                dismissalDate: now.addingTimeInterval(-60)
            ) == .immediately
        )
    }
}
