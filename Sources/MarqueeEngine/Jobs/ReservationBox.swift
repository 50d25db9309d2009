import Synchronization

/// The reservation the job's row holds for this run (`Job.reservedThrough`).
final class ReservationBox: Sendable {
    private let value: Mutex<Int64?>

    init(_ value: Int64?) {
        self.value = Mutex(value)
    }

    var current: Int64? {
        get { value.withLock { $0 } }
        set { value.withLock { $0 = newValue } }
    }
}
