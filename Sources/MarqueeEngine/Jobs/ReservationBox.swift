import Synchronization

/// The reservation the job's row holds for this run (`Job.reservedThrough`), and the highest row the
/// run has handed to the APNs client (at most the reservation: a run reserves ahead of its sends).
final class ReservationBox: Sendable {
    private struct Rows {
        var reserved: Int64?
        var handedOut: Int64?
    }

    private let rows: Mutex<Rows>

    init(_ reserved: Int64?) {
        rows = Mutex(Rows(reserved: reserved))
    }

    var current: Int64? {
        get { rows.withLock { $0.reserved } }
        set { rows.withLock { $0.reserved = newValue } }
    }

    /// The highest row handed to the client so far; `nil` before the first.
    var handedOutThrough: Int64? {
        rows.withLock { $0.handedOut }
    }

    /// Sends through `row` are handed to the client.
    func handedOut(through row: Int64) {
        rows.withLock { $0.handedOut = max($0.handedOut ?? row, row) }
    }
}
