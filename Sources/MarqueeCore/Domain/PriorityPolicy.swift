/// Which `apns-priority` a broadcast asks for before the budget has its say. Priority 10 wakes the
/// device and counts against ActivityKit's hourly budget; priority 5 is delivered as the device's
/// power state allows and does not count (`apns-reference.md` §7). Chosen per event; an event
/// without one follows the server's `broadcasts.priorityPolicy`.
public enum PriorityPolicy: String, Sendable, Hashable, CaseIterable {
    /// 10 for updates marked important and for every update with an alert; 5 for the rest.
    case standard
    /// 10 for every broadcast (infrequent updates that must show at once), within the budget.
    case immediate
    /// 5 for every broadcast unless the request names a priority itself.
    case normal

    /// The priority a broadcast asks for: the request's own `priority` if it names one, else the
    /// policy's rule.
    public func requestedPriority(explicit: APNSPriority?, important: Bool, hasAlert: Bool) -> APNSPriority {
        if let explicit { return explicit }
        switch self {
        case .standard: return important || hasAlert ? .immediate : .normal
        case .immediate: return .immediate
        case .normal: return important ? .immediate : .normal
        }
    }
}
