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

    mutating func decline(_ candidate: some APNSDispatchCandidate) {
        decline(ObjectIdentifier(candidate))
    }

    mutating func decline(_ identity: ObjectIdentifier) {
        declined.append(identity)
    }
}
