extension DeliveryBatch {
    /// The accepted starts of the batch, one per token (a token repeated keeps its first): what the
    /// event's start ledger records. Empty for a batch of a job that starts nothing.
    public var ledgerEntries: [Delivery] {
        guard startedEventID != nil else { return [] }
        var seen: Set<Int64> = []
        return deliveries.filter { $0.outcome == .accepted && seen.insert($0.tokenRowID).inserted }
    }

    /// The outcomes recorded as deliveries: all but the accepted starts, which the ledger holds.
    /// A (token, attempt) repeated in the batch keeps its first outcome (one statement may not
    /// write a row twice).
    public var recordedDeliveries: [Delivery] {
        var seen: Set<DeliveryKey> = []
        return deliveries.filter { delivery in
            (startedEventID == nil || delivery.outcome != .accepted)
                && seen.insert(DeliveryKey(tokenRowID: delivery.tokenRowID, attempt: delivery.attempt)).inserted
        }
    }
}

/// A delivery's unique key within a job.
private struct DeliveryKey: Hashable {
    var tokenRowID: Int64
    var attempt: Int
}
