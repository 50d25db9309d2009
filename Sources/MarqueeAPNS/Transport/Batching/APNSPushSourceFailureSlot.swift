import Synchronization

/// Carries a page source's failure from the pump to the outcome iterator, which throws it after the
/// last outcome: the producer of outcomes does not throw, so the error travels beside it.
final class APNSPushSourceFailureSlot<Failure: Error>: Sendable {
    private let state = Mutex<APNSPushSourceError<Failure>?>(nil)

    func store(_ error: APNSPushSourceError<Failure>) {
        state.withLock { $0 = error }
    }

    /// The failure, once: a second call returns nil, so the sequence ends after throwing.
    func take() -> APNSPushSourceError<Failure>? {
        state.withLock { slot in
            defer { slot = nil }
            return slot
        }
    }
}
