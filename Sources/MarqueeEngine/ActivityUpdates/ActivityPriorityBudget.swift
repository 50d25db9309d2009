import Foundation
import MarqueeCore

/// The hourly budget of priority-10 device pushes per activity: past it, an activity-update job
/// sends that activity's push at 5 and counts it as downgraded, rather than let ActivityKit's own
/// (unpublished) budget throttle the activity. An activity whose app reported frequent pushes
/// enabled (`NSSupportsLiveActivitiesFrequentUpdates`, which the user can turn off) gets the larger
/// budget Apple gives such apps.
///
/// The hour is a fixed window per activity: it begins with the first priority-10 push APNs accepts
/// after the previous window ended, and counts the accepted ones until an hour has passed. Only
/// accepted pushes count, committed with their batch; two jobs pushing to the same activity at
/// once can both take its last unit.
public struct ActivityPriorityBudget: Sendable, Hashable {
    /// Priority-10 pushes per activity in its hour; 0 sends everything at 5.
    public var limitPerHour: Int
    /// The same for activities with frequent pushes enabled.
    public var frequentLimitPerHour: Int

    /// Apple publishes neither number (UNCONFIRMED). 30 matches the channel budget's default;
    /// apps with frequent updates are allowed noticeably more, so 120 is a guess, not a fact.
    public static let defaultLimitPerHour = 30
    public static let defaultFrequentLimitPerHour = 120

    /// How long a window lasts.
    public static let window: Duration = .seconds(3600)

    public init(
        limitPerHour: Int = Self.defaultLimitPerHour,
        frequentLimitPerHour: Int = Self.defaultFrequentLimitPerHour
    ) {
        self.limitPerHour = max(0, limitPerHour)
        self.frequentLimitPerHour = max(0, frequentLimitPerHour)
    }

    /// Windows that began at or before this time are over at `now`.
    public static func windowsEnded(at now: Date) -> Date {
        now.addingTimeInterval(-window.timeInterval)
    }

    /// The priority-10 pushes the activity has used at `now`: its window's count while the window
    /// lasts, 0 without one or once it has ended.
    public static func used(_ window: ActivityPriorityWindow?, at now: Date) -> Int {
        guard let window, window.start > windowsEnded(at: now) else { return 0 }
        return window.sent
    }

    /// What is sent to one activity, given what the job asked for.
    public func decide(
        requested: APNSPriority,
        frequentPushesEnabled: Bool,
        window: ActivityPriorityWindow?,
        now: Date
    ) -> PriorityDecision {
        let limit = frequentPushesEnabled ? frequentLimitPerHour : limitPerHour
        let key =
            frequentPushesEnabled
            ? "broadcasts.frequentActivityPriorityBudgetPerHour" : "broadcasts.activityPriorityBudgetPerHour"
        return .within(
            limit: limit,
            used: Self.used(window, at: now),
            requested: requested,
            downgradeReason:
                "the activity has used its budget of \(limit) priority-10 pushes this hour (\(key)); sent at priority 5"
        )
    }
}
