/// What one reconciliation did: the reports Marquee accepted, those it did not (sent again next
/// time), and the second activities ended.
public struct ReconcileOutcome: Sendable, Equatable {
    public var sent: [PresenceReport]
    public var unsent: [UnsentReport]
    /// IDs of activities ended because another activity of their event came first.
    public var endedActivityIDs: [String]

    public struct UnsentReport: Sendable, Equatable {
        public var report: PresenceReport
        public var error: MarqueeKitError
    }

    public init(sent: [PresenceReport] = [], unsent: [UnsentReport] = [], endedActivityIDs: [String] = []) {
        self.sent = sent
        self.unsent = unsent
        self.endedActivityIDs = endedActivityIDs
    }
}
