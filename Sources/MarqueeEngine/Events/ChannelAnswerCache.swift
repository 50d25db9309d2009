import MarqueeCore
import Synchronization

/// Keeps the answers of channel-ID reads (`EventService.activeChannel`: the event by its key, its
/// active channel in an environment, when its timeline will close it, and the answer's entity
/// tag), so that what every follower's app asks at kick-off costs no store read.
///
/// An answer is kept until it may have changed: the store tells of every committed change to an
/// event's channels, the event or its timeline's `close` step (`ChannelAnswerChanges`), in this
/// process at once and, on PostgreSQL, on every other replica when the change's NOTIFY arrives
/// (the server's listener calls `forget(eventID:)`). While a replica cannot hear of changes (its
/// listening connection is down, or not up yet) it keeps nothing (`suspend`). Only answers are
/// kept, not their absence: an unknown event or one without an active channel is read every time.
///
/// Every forgetting advances a generation, and a read keeps what it found only if no forgetting
/// happened since it began: a read that saw the store before a change, and learnt of it after the
/// change was announced, is never kept.
public final class ChannelAnswerCache: Sendable {
    /// What an answer is kept by: the app, the event's key as the app names it, the environment.
    public struct Key: Hashable, Sendable {
        public var appID: AppID
        public var eventKey: String
        public var environment: APNSEnvironment
    }

    private struct State {
        var answers: [Key: EventChannelView] = [:]
        /// Advanced by every forgetting and suspension.
        var generation: UInt64 = 0
        /// False while changes made elsewhere cannot be heard of.
        var accepting = true
    }

    /// The most answers kept (`channels.answerCacheSize`); 0 keeps none.
    public let capacity: Int
    private let state = Mutex(State())

    public init(capacity: Int) {
        self.capacity = max(0, capacity)
    }

    /// The kept answer, if any.
    func answer(for key: Key) -> EventChannelView? {
        guard capacity > 0 else { return nil }
        return state.withLock { $0.answers[key] }
    }

    /// What to pass to `remember` for a read that begins now.
    var generation: UInt64 { state.withLock { $0.generation } }

    /// Keeps what a read begun at `generation` found, unless something was forgotten since (the
    /// read may have seen the store before the change) or the cache is suspended. Past its
    /// capacity an arbitrary answer makes room: a hot one is read again once, nothing more.
    func remember(_ answer: EventChannelView, for key: Key, readAt generation: UInt64) {
        guard capacity > 0 else { return }
        state.withLock { state in
            guard state.accepting, state.generation == generation else { return }
            if state.answers[key] == nil, state.answers.count >= capacity {
                state.answers.remove(at: state.answers.startIndex)
            }
            state.answers[key] = answer
        }
    }

    /// Forgets the event's answers (`nil`: every answer): it, its channels or its timeline changed.
    public func forget(eventID: EventID?) {
        state.withLock { state in
            state.generation &+= 1
            guard let eventID else {
                state.answers.removeAll()
                return
            }
            state.answers = state.answers.filter { $0.value.event.id != eventID }
        }
    }

    /// Forgets every answer and resumes keeping them: this replica hears of changes again.
    public func resume() {
        state.withLock {
            $0.generation &+= 1
            $0.answers.removeAll()
            $0.accepting = true
        }
    }

    /// Forgets every answer and keeps none until `resume`: changes made elsewhere cannot be
    /// heard of.
    public func suspend() {
        state.withLock {
            $0.generation &+= 1
            $0.answers.removeAll()
            $0.accepting = false
        }
    }

    var count: Int { state.withLock { $0.answers.count } }
}
