import Foundation

/// Which provider token one connection writes with: the decision alone, without I/O, so that every
/// rule is testable and `APNSConnectionHandler` only carries it out.
///
/// APNs answers `TooManyProviderTokenUpdates` when a connection switches tokens more than once in
/// 20 minutes, so a connection keeps its token when the cache renewed it within that time, unless
/// the token was rejected or is about to pass Apple's one-hour limit: then the connection retires
/// (drains) and a fresh one takes over.
struct APNSConnectionTokenState {
    enum Decision: Equatable {
        case write(authorization: String)
        /// This connection may not write again. There is deliberately no "skip this time": a
        /// connection that declines must leave the pool's choice for good, or dispatch would pick it
        /// again at once, forever.
        case retire
    }

    private(set) var token: APNSProviderToken?
    private var adoptedAt: Date?
    private var rejected = false

    var generation: Int? { token?.generation }

    mutating func decide(current: APNSProviderToken, now: Date) -> Decision {
        guard let inUse = token, let adoptedAt else {
            adopt(current, now: now)
            return .write(authorization: current.authorizationValue)
        }
        if current.generation == inUse.generation {
            // The cache has nothing newer than a token APNs rejected: this connection cannot help.
            return rejected ? .retire : .write(authorization: inUse.authorizationValue)
        }
        if now.timeIntervalSince(adoptedAt) >= APNSProviderTokenCache.minimumRenewalAge {
            adopt(current, now: now)
            return .write(authorization: current.authorizationValue)
        }
        if rejected || inUse.age(at: now) >= APNSProviderTokenCache.maximumTokenAge - 5 * 60 {
            return .retire
        }
        return .write(authorization: inUse.authorizationValue)
    }

    /// APNs called the token of `generation` expired.
    mutating func tokenWasRejected(generation: Int) {
        if token?.generation == generation { rejected = true }
    }

    private mutating func adopt(_ current: APNSProviderToken, now: Date) {
        token = current
        adoptedAt = now
        rejected = false
    }
}
