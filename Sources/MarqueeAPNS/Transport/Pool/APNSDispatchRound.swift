/// What dispatch needs to know of a connection to choose it.
protocol APNSDispatchCandidate: AnyObject {
    var availableStreams: Int { get }
}

/// One pass of `APNSConnectionPool.dispatch` choosing connections: the one with the most free
/// streams, never one that already declined in this pass. A connection that declines (it retired
/// instead of giving an authorization) is excluded even if it still reports free streams, so the
/// pass ends after at most one refusal per connection instead of spinning on the same one.
struct APNSDispatchRound {
    /// Usually empty; a handful at most (connections per endpoint).
    private var declined: [ObjectIdentifier] = []

    func choose<Candidate: APNSDispatchCandidate>(from candidates: [Candidate]) -> Candidate? {
        choose(from: candidates, availableStreams: \.availableStreams, identity: { ObjectIdentifier($0) })
    }

    /// The same for candidates held as existentials (the pool's `any APNSPoolConnection`), which
    /// do not conform to the protocol themselves.
    func choose<Candidate>(
        from candidates: [Candidate],
        availableStreams: (Candidate) -> Int,
        identity: (Candidate) -> ObjectIdentifier
    ) -> Candidate? {
        var best: Candidate?
        var bestStreams = 0
        for candidate in candidates {
            let streams = availableStreams(candidate)
            guard streams > 0, best == nil || streams > bestStreams else { continue }
            if !declined.isEmpty && declined.contains(identity(candidate)) { continue }
            best = candidate
            bestStreams = streams
        }
        return best
    }

    /// The streams a dispatch writes on now, of a connection with `available` free, `inFlight` in
    /// flight and `limit` its concurrency limit: all of them, unless it is busy and few are free.
    ///
    /// A connection with at least a batch in flight (`minimumBatch`, at most half its limit) and
    /// fewer than a batch free waits for its answers to free a batch. Otherwise every read cycle's
    /// few answers became a write of as few requests: on a fan-out at loopback speed 4.7 pushes per
    /// write and per read, each write its system call, TLS record and wake-up of the server, which
    /// then read 6.6 requests at a time against h2load's 11.5. An idle or lightly used connection
    /// (fewer than a batch in flight: a broadcast, a trickle of updates) is written at once, and a
    /// request waits at most for a batch of answers to requests already sent.
    static func writableStreams(available: Int, inFlight: Int, limit: Int, minimumBatch: Int) -> Int {
        let batch = min(minimumBatch, limit / 2)
        guard batch > 1, inFlight >= batch, available < batch else { return available }
        return 0
    }

    mutating func decline(_ candidate: some APNSDispatchCandidate) {
        decline(ObjectIdentifier(candidate))
    }

    mutating func decline(_ identity: ObjectIdentifier) {
        declined.append(identity)
    }
}
