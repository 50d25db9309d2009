import MarqueeCore
import NIOCore
import NIOPosix
import Synchronization

/// The deadline on each call of `PostgresStore` to PostgreSQL (`database.callTimeoutSeconds`).
///
/// PostgresNIO 1.33 can lose a query. When PostgreSQL restarts in immediate mode while queries are
/// in flight, some of the queries on the connections it cut never end: no rows, no error, and
/// cancelling the task that waits does not end them either (in a first experiment, two to eight of
/// twelve callers busy during the restart hung for good, while the pool went on serving everyone else
/// on new connections; `PostgresRestartTests` fails every time without this deadline). A job run
/// waiting on such a call renews nothing and commits nothing, and at 50,000 devices a fan-out sat
/// with all its parts stuck that way.
///
/// So each call runs in a task of its own, and its caller waits for whichever comes first: the
/// call's answer, or the deadline, which answers the caller with `StoreCallTimedOut` and cancels the
/// call. A lost call is left to end on its own if it ever does; its connection has already left the
/// pool (the pool counts a closed connection out even while it is leased), so nothing else waits on
/// it. The deadlines are watched by one event-loop timer for all calls (`CallDeadlineWatch`), not a
/// timer each: arming and cancelling one per call woke the event loop twice per query.
struct PostgresCallDeadline: Sendable {
    let limit: Duration
    private let watch: CallDeadlineWatch

    init(limit: Duration, eventLoop: any EventLoop = MultiThreadedEventLoopGroup.singleton.any()) {
        self.limit = limit
        watch = CallDeadlineWatch(limit: .nanoseconds(limit.wholeNanoseconds), eventLoop: eventLoop)
    }

    /// The calls whose deadline is watched now: those in flight.
    var callsWatched: Int { watch.count }

    func run<Result: Sendable>(_ operation: @escaping @Sendable () async throws -> Result) async throws -> Result {
        let race = CallRace<Result>(watch: watch)
        let limit = limit
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                race.begin(continuation)
                let call = Task {
                    do {
                        race.finish(.success(try await operation()))
                    } catch {
                        race.finish(.failure(error))
                    }
                }
                let ticket = watch.watch {
                    if race.finish(.failure(StoreCallTimedOut(limit: limit))) { call.cancel() }
                }
                race.started(call: call, ticket: ticket)
            }
        } onCancel: {
            race.cancel()
        }
    }
}

/// Who answers a call's caller first: the call, its deadline, or the caller's cancellation (which
/// cancels the call, whose answer then comes soon, unless the call is lost: then the deadline ends it).
private final class CallRace<Result: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Result, any Error>?
        var call: Task<Void, Never>?
        var ticket: CallDeadlineWatch.Ticket?
        var answered = false
        var cancelled = false
    }

    private let state = Mutex(State())
    private let watch: CallDeadlineWatch

    init(watch: CallDeadlineWatch) {
        self.watch = watch
    }

    func begin(_ continuation: CheckedContinuation<Result, any Error>) {
        state.withLock { $0.continuation = continuation }
    }

    /// Keeps the call and its deadline's ticket, cancels the call at once if the caller was
    /// cancelled first, and stops watching the deadline if the call has answered already.
    func started(call: Task<Void, Never>, ticket: CallDeadlineWatch.Ticket) {
        let (cancelCall, forget) = state.withLock { state -> (Bool, Bool) in
            state.call = call
            state.ticket = ticket
            return (state.cancelled, state.answered)
        }
        if cancelCall { call.cancel() }
        if forget { watch.forget(ticket) }
    }

    /// Answers the caller, if nobody has; returns whether this did.
    @discardableResult
    func finish(_ result: Swift.Result<Result, any Error>) -> Bool {
        let (continuation, ticket) = state.withLock {
            state -> (CheckedContinuation<Result, any Error>?, CallDeadlineWatch.Ticket?) in
            guard !state.answered else { return (nil, nil) }
            state.answered = true
            defer { state.continuation = nil }
            return (state.continuation, state.ticket)
        }
        guard let continuation else { return false }
        if let ticket { watch.forget(ticket) }
        continuation.resume(with: result)
        return true
    }

    func cancel() {
        let call = state.withLock { state -> Task<Void, Never>? in
            state.cancelled = true
            return state.call
        }
        call?.cancel()
    }
}
