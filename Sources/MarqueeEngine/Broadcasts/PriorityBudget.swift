import MarqueeCore

/// The hourly budget of priority-10 broadcasts per channel: past it, Marquee sends at 5 and says
/// so, rather than let ActivityKit's own (unpublished) budget throttle the activity.
///
/// The count comes from the broadcast log (accepted priority-10 broadcasts of the last hour), so
/// every replica sees the same budget. Two replicas deciding at the same instant can both take the
/// last unit: the budget may be passed by the number of broadcasts in flight on one channel at once.
public struct PriorityBudget: Sendable, Hashable {
    /// Priority-10 broadcasts allowed per channel in any hour; 0 sends everything at 5.
    public var limitPerHour: Int

    public init(limitPerHour: Int) {
        self.limitPerHour = max(0, limitPerHour)
    }

    /// The window the budget counts over.
    public static let window: Duration = .seconds(3600)

    /// What is sent given what was asked for and how many priority-10 broadcasts APNs accepted on
    /// the channel within the window.
    public func decide(requested: APNSPriority, sentAtImmediateInWindow used: Int) -> PriorityDecision {
        .within(
            limit: limitPerHour,
            used: used,
            requested: requested,
            downgradeReason:
                """
                the channel has used its budget of \(limitPerHour) priority-10 broadcasts in the last hour \
                (broadcasts.priorityBudgetPerHour); sent at priority 5
                """
        )
    }
}

/// The priority a broadcast is sent at, and why it is not the one asked for when it is not.
public struct PriorityDecision: Sendable, Hashable {
    public var requested: APNSPriority
    public var priority: APNSPriority
    /// Set when the budget sent it at 5 instead of 10.
    public var downgradeReason: String?

    public init(requested: APNSPriority, priority: APNSPriority, downgradeReason: String? = nil) {
        self.requested = requested
        self.priority = priority
        self.downgradeReason = downgradeReason
    }

    public var downgraded: Bool { downgradeReason != nil }

    /// The rule every priority budget applies: what was asked for, unless it is 10 and `used` has
    /// reached `limit`; then 5, for `downgradeReason`.
    static func within(
        limit: Int,
        used: Int,
        requested: APNSPriority,
        downgradeReason: @autoclosure () -> String
    ) -> PriorityDecision {
        guard requested == .immediate, used >= limit else {
            return PriorityDecision(requested: requested, priority: requested)
        }
        return PriorityDecision(requested: requested, priority: .normal, downgradeReason: downgradeReason())
    }
}
