import MarqueeCore

/// How broadcasts choose their priority: the policy, and the hourly budget of priority-10 sends
/// per channel.
public struct BroadcastPolicy: Sendable, Hashable {
    public var priorityPolicy: PriorityPolicy
    public var budget: PriorityBudget
    /// The hourly budget of priority-10 device pushes per activity on an update token.
    public var activityBudget: ActivityPriorityBudget

    /// Apple does not publish ActivityKit's budget; 30 priority-10 broadcasts per channel and hour
    /// stays well clear of where updates were seen throttled, and the rest still arrive at 5.
    public static let defaultPriorityBudgetPerHour = 30

    public init(
        priorityPolicy: PriorityPolicy = .standard,
        priorityBudgetPerHour: Int = Self.defaultPriorityBudgetPerHour,
        activityBudget: ActivityPriorityBudget = ActivityPriorityBudget()
    ) {
        self.priorityPolicy = priorityPolicy
        self.budget = PriorityBudget(limitPerHour: priorityBudgetPerHour)
        self.activityBudget = activityBudget
    }
}
