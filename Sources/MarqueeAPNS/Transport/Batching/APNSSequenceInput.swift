/// A batch input over a synchronous sequence the caller already has.
struct APNSSequenceInput<Pushes: Sequence & Sendable>: APNSPushBatchInput where Pushes.Element == APNSDevicePush {
    private let pushes: Pushes
    /// Made on the event loop at the first pull: iterators need not be Sendable.
    private var iterator: Pushes.Iterator?
    private var closed = false

    init(_ pushes: Pushes) {
        self.pushes = pushes
    }

    mutating func next() -> APNSPushBatchInputStep {
        guard !closed else { return .end }
        if iterator == nil { iterator = pushes.makeIterator() }
        guard let push = iterator?.next() else { return .end }
        return .push(push)
    }

    mutating func close() {
        closed = true
        iterator = nil
    }
}
