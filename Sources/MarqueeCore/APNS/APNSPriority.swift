/// `apns-priority`. Live Activity device pushes use 5 or 10; broadcasts also accept 1.
/// Priority 10 counts against ActivityKit's hourly budget, 5 does not.
public enum APNSPriority: Int, Sendable, Hashable, Codable, CaseIterable {
    /// Power first; never wakes the device. Broadcast only.
    case low = 1
    /// Delivered based on the device's power state; not counted against the budget.
    case normal = 5
    /// Delivered immediately; counted against the budget.
    case immediate = 10

    /// The header's value.
    public var headerValue: String { String(rawValue) }

    /// Parses a header value; `nil` for anything APNs answers with `BadPriority`.
    public init?(headerValue: String) {
        guard let number = Int(headerValue), let priority = APNSPriority(rawValue: number) else { return nil }
        self = priority
    }
}
