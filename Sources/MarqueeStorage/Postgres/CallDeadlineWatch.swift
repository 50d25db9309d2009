import NIOCore
import Synchronization

/// The deadlines of the store's calls in flight, all on one event-loop timer: armed for the
/// earliest deadline while any call is watched, unarmed when none is. A call is watched from its
/// start until it answers (`forget`); a call still watched at its deadline is expired (its closure
/// runs, off the lock).
///
/// Under steady load the timer fires about once per `limit`, when the oldest watched call's
/// deadline comes (that call long answered), and is armed again for the next; a call costs a lock
/// and a dictionary entry, not a timer scheduled on and cancelled from another thread.
final class CallDeadlineWatch: Sendable {
    struct Ticket: Hashable, Sendable {
        fileprivate let number: UInt64
    }

    private struct Watched {
        let deadline: NIODeadline
        let expire: @Sendable () -> Void
    }

    private struct State {
        var nextNumber: UInt64 = 0
        var watched: [Ticket: Watched] = [:]
        var armed = false
    }

    private let limit: TimeAmount
    private let eventLoop: any EventLoop
    private let state = Mutex(State())

    init(limit: TimeAmount, eventLoop: any EventLoop) {
        self.limit = limit
        self.eventLoop = eventLoop
    }

    var count: Int { state.withLock { $0.watched.count } }

    /// Watches a call started now: `expire` runs if it is still watched `limit` from now.
    func watch(expire: @escaping @Sendable () -> Void) -> Ticket {
        let deadline = NIODeadline.now() + limit
        let (ticket, needsArming) = state.withLock { state -> (Ticket, Bool) in
            let ticket = Ticket(number: state.nextNumber)
            state.nextNumber += 1
            state.watched[ticket] = Watched(deadline: deadline, expire: expire)
            defer { state.armed = true }
            return (ticket, !state.armed)
        }
        if needsArming { arm(at: deadline) }
        return ticket
    }

    /// Stops watching a call: it answered.
    func forget(_ ticket: Ticket) {
        state.withLock { _ = $0.watched.removeValue(forKey: ticket) }
    }

    private func arm(at deadline: NIODeadline) {
        eventLoop.scheduleTask(deadline: deadline) { self.expireDue() }
    }

    /// Expires every call past its deadline, then arms the timer for the earliest left, if any.
    private func expireDue() {
        let now = NIODeadline.now()
        let (due, next) = state.withLock { state -> ([Watched], NIODeadline?) in
            let due = state.watched.filter { $0.value.deadline <= now }
            for ticket in due.keys { state.watched[ticket] = nil }
            let next = state.watched.values.lazy.map(\.deadline).min()
            state.armed = next != nil
            return (Array(due.values), next)
        }
        for call in due { call.expire() }
        if let next { arm(at: next) }
    }
}
