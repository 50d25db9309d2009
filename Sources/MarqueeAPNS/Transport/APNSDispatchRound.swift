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
        var best: Candidate?
        for candidate in candidates where candidate.availableStreams > 0 {
            if let best, best.availableStreams >= candidate.availableStreams { continue }
            if !declined.isEmpty && declined.contains(ObjectIdentifier(candidate)) { continue }
            best = candidate
        }
        return best
    }

    mutating func decline(_ candidate: some APNSDispatchCandidate) {
        declined.append(ObjectIdentifier(candidate))
    }
}
