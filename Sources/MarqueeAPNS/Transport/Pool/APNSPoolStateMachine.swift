import DequeModule

/// The decisions of one `APNSConnectionPool`, without I/O: no channel, no timer, no metric, no
/// clock (as PostgresNIO keeps `PoolStateMachine` apart from `ConnectionPool`). The pool tells it
/// what happened and carries out what it answers; every rule here is tested without a socket
/// (`APNSPoolStateMachineTests`).
///
/// It owns the queue of requests waiting for a stream, the count of requests admitted and not yet
/// answered (the bound on pulling from batches), the connection attempts (how many failed in a
/// row, whether a reconnect waits out its back-off) and the requests waiting out a retry's
/// back-off. What becomes of a request that left a connection is decided in one place
/// (`APNSPoolStateMachine+Outcomes.swift`): answered requests complete or are retried by their APNs
/// reason, unprocessed ones go to the front of the queue without counting an attempt, and uncertain
/// ones (written, never answered) are retried only if sending them twice is harmless
/// (`APNSOperation.mayResendWhenUncertain`): never a start or a channel creation.
///
/// The connections themselves (their streams, token and concurrency limit) are theirs
/// (`APNSConnectionStateMachine`); the pool reads what they report (free streams, whether a token
/// was accepted) and hands those facts in.
struct APNSPoolStateMachine {
    struct Settings {
        var maximumOutstandingRequests: Int
        var connectionsPerEndpoint: Int
        var retryPolicy: APNSRetryPolicy
    }

    /// A request that has ended, with the result its caller hears. It no longer counts as
    /// outstanding.
    struct Completion {
        var request: APNSQueuedRequest
        var result: Result<APNSResponse, APNSError>
    }

    /// The next queued request for a free stream.
    enum NextWrite {
        case write(APNSQueuedRequest)
        /// Its caller stopped listening: it ends `cancelled` instead of being written.
        case drop(Completion)
    }

    /// What a failed connection attempt leads to.
    enum ConnectFailureAction: Equatable {
        case none
        /// Wait, then call `reconnectTimerFired()` and dispatch.
        case scheduleReconnect(after: Duration)
        /// Too many attempts failed in a row: fail the queue (`failQueued`) and every batch.
        case giveUp(APNSError)
    }

    /// What shutting down leaves for the pool to carry out.
    struct ShutDown {
        /// Whether a reconnect timer was waiting (cancel it).
        var cancelReconnect: Bool
        /// The retry timers to cancel.
        var retryTimerIDs: [Int]
        /// The requests that waited out a back-off or in the queue, each ending `clientShutDown`.
        var completions: [Completion]
    }

    let settings: Settings
    // The queue, the count and the retry bookkeeping are written by the outcomes' extension in
    // its own file too, hence not `private(set)`; nothing outside the machine writes them.
    var queue = Deque<APNSQueuedRequest>()
    /// Requests admitted and not yet answered: queued, in flight or waiting to retry.
    var outstanding = 0
    private(set) var isShutDown = false
    /// Connection attempts that failed since a connection last became ready.
    private(set) var consecutiveConnectFailures = 0
    /// A reconnect waits out its back-off: no connection opens until it fires.
    private(set) var reconnectScheduled = false
    /// Requests waiting out a back-off, by timer, so that shutdown can answer them.
    var retryWaiting: [Int: APNSQueuedRequest] = [:]
    var nextRetryTimerID = 0
    /// What the pool last added to the shared connection and stream gauges.
    private var reportedConnections = 0
    private var reportedStreams = 0

    init(settings: Settings) {
        self.settings = settings
    }

    var hasQueuedRequests: Bool { !queue.isEmpty }

    // MARK: Admission

    /// A single `send`: queued, or ended at once when the pool is shut down (then it never counted
    /// as outstanding).
    mutating func submit(_ request: APNSQueuedRequest) -> Completion? {
        guard !isShutDown else { return Completion(request: request, result: .failure(.clientShutDown)) }
        outstanding += 1
        queue.append(request)
        return nil
    }

    /// How many requests may be taken from the batches now, with `freeStreams` free on the
    /// connections: only as many as those streams carry (one when there is none and nothing waits,
    /// so that a connection opens), and never past `maximumOutstandingRequests`. A request taken is
    /// a push the batch handed over, and what waits unwritten in the pool when the process dies is as
    /// uncertain to a fan-out as what was in flight; what waits stays in its batch instead.
    func pullRoom(freeStreams: Int) -> Int {
        var room = freeStreams - queue.count
        if room <= 0 && queue.isEmpty { room = 1 }
        return max(0, min(room, settings.maximumOutstandingRequests - outstanding))
    }

    /// A request taken from a batch within `pullRoom`.
    mutating func pulled(_ request: APNSQueuedRequest) {
        outstanding += 1
        queue.append(request)
    }

    // MARK: Dispatch

    /// The next request for a free stream, `nil` when none waits.
    mutating func nextWrite() -> NextWrite? {
        guard let request = queue.popFirst() else { return nil }
        if request.sink.isCancelled { return .drop(finish(request, result: .failure(.cancelled))) }
        return .write(request)
    }

    /// Ends every queued request with `error` (no connection, or no token to sign with).
    mutating func failQueued(_ error: APNSError) -> [Completion] {
        var completions: [Completion] = []
        while let request = queue.popFirst() {
            completions.append(finish(request, result: .failure(error)))
        }
        return completions
    }

    // MARK: Connections

    /// How many connections to open now, with `live` connecting or ready: none while a reconnect
    /// waits out its back-off or nothing is queued; one while none has had its token accepted or
    /// the last attempt failed (more would only multiply handshakes that may fail alike); else up
    /// to the pool's size.
    func connectionsToOpen(live: Int, anyTokenAccepted: Bool) -> Int {
        guard !isShutDown, !reconnectScheduled, !queue.isEmpty else { return 0 }
        let wanted = consecutiveConnectFailures > 0 || !anyTokenAccepted ? 1 : settings.connectionsPerEndpoint
        return max(0, wanted - live)
    }

    mutating func connectionBecameReady() {
        consecutiveConnectFailures = 0
    }

    /// An attempt failed (TCP, TLS, or closed before the handshake). `batchesWaiting`: whether a
    /// batch still has requests to give. `description` names the endpoint and why, for the error.
    mutating func connectAttemptFailed(description: String, batchesWaiting: Bool) -> ConnectFailureAction {
        consecutiveConnectFailures += 1
        if consecutiveConnectFailures >= settings.retryPolicy.maximumConnectAttempts {
            consecutiveConnectFailures = 0
            return .giveUp(.connectionFailed(description))
        }
        guard !queue.isEmpty || batchesWaiting, !reconnectScheduled, !isShutDown else { return .none }
        reconnectScheduled = true
        return .scheduleReconnect(after: settings.retryPolicy.delay(beforeRetry: consecutiveConnectFailures))
    }

    mutating func reconnectTimerFired() {
        reconnectScheduled = false
    }

    /// A connection closed: an attempt that never became ready counts as a failed one (unless the
    /// pool closed it by shutting down).
    mutating func connectionClosed(wasReady: Bool, description: String, batchesWaiting: Bool) -> ConnectFailureAction {
        guard !wasReady, !isShutDown else { return .none }
        return connectAttemptFailed(description: description, batchesWaiting: batchesWaiting)
    }

    // MARK: Shutdown and gauges

    /// From here on nothing is admitted, retried or reconnected; what waits ends `clientShutDown`.
    mutating func shutDown() -> ShutDown {
        isShutDown = true
        let cancelReconnect = reconnectScheduled
        reconnectScheduled = false
        var completions: [Completion] = []
        for request in retryWaiting.values {
            completions.append(finish(request, result: .failure(.clientShutDown)))
        }
        let timerIDs = Array(retryWaiting.keys)
        retryWaiting.removeAll()
        completions += failQueued(.clientShutDown)
        return ShutDown(cancelReconnect: cancelReconnect, retryTimerIDs: timerIDs, completions: completions)
    }

    /// How far to move the shared gauges now that `open` connections are handshaken and not closed
    /// and `streams` await an answer: by what changed since the last report (zero and zero when
    /// nothing did).
    mutating func gaugeChanges(open: Int, streams: Int) -> (connections: Int, streams: Int) {
        defer {
            reportedConnections = open
            reportedStreams = streams
        }
        return (open - reportedConnections, streams - reportedStreams)
    }
}
