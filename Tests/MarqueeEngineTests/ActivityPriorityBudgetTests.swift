import Foundation
import MarqueeAPNS
import MarqueeCore
import MarqueeEngine
import Testing

/// How an activity's device push picks its priority from its hourly budget, without any I/O.
@Suite("Activity priority budget")
struct ActivityPriorityBudgetTests {
    let now = Date(timeIntervalSince1970: 1_767_225_600)
    let budget = ActivityPriorityBudget(limitPerHour: 2, frequentLimitPerHour: 5)

    @Test("within its hour an activity gets 10 until its budget is used, then 5 with the reason")
    func withinTheHour() {
        let window = ActivityPriorityWindow(start: now.addingTimeInterval(-600), sent: 1)
        let within = budget.decide(requested: .immediate, frequentPushesEnabled: false, window: window, now: now)
        #expect(within.priority == .immediate && !within.downgraded)
        var spent = window
        spent.sent = 2
        let downgraded = budget.decide(requested: .immediate, frequentPushesEnabled: false, window: spent, now: now)
        #expect(downgraded.priority == .normal && downgraded.downgraded)
        #expect(downgraded.downgradeReason?.contains("broadcasts.activityPriorityBudgetPerHour") == true)
    }

    @Test("frequent pushes enabled: the larger budget applies")
    func frequentPushes() {
        let window = ActivityPriorityWindow(start: now.addingTimeInterval(-600), sent: 4)
        #expect(
            budget.decide(requested: .immediate, frequentPushesEnabled: true, window: window, now: now).priority
                == .immediate
        )
        #expect(
            budget.decide(requested: .immediate, frequentPushesEnabled: false, window: window, now: now).priority
                == .normal
        )
        let spent = ActivityPriorityWindow(start: now.addingTimeInterval(-600), sent: 5)
        let downgraded = budget.decide(requested: .immediate, frequentPushesEnabled: true, window: spent, now: now)
        #expect(downgraded.downgradeReason?.contains("broadcasts.frequentActivityPriorityBudgetPerHour") == true)
    }

    @Test("an hour after a window began it is over: no window counts as none used")
    func windowEnds() {
        let old = ActivityPriorityWindow(start: now.addingTimeInterval(-3600), sent: 9)
        #expect(ActivityPriorityBudget.used(old, at: now) == 0)
        #expect(ActivityPriorityBudget.used(nil, at: now) == 0)
        #expect(
            ActivityPriorityBudget.used(ActivityPriorityWindow(start: now.addingTimeInterval(-3599), sent: 9), at: now)
                == 9
        )
        #expect(
            budget.decide(requested: .immediate, frequentPushesEnabled: false, window: old, now: now).priority
                == .immediate
        )
    }

    @Test("priority 5 never touches the budget; a budget of 0 sends everything at 5")
    func normalAndZero() {
        let spent = ActivityPriorityWindow(start: now, sent: 100)
        let normal = budget.decide(requested: .normal, frequentPushesEnabled: false, window: spent, now: now)
        #expect(normal.priority == .normal && !normal.downgraded)
        let none = ActivityPriorityBudget(limitPerHour: 0, frequentLimitPerHour: 0)
        #expect(none.decide(requested: .immediate, frequentPushesEnabled: true, window: nil, now: now).downgraded)
    }
}
