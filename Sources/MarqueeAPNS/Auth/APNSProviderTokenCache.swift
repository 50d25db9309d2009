import Foundation
import MarqueeCore
import Synchronization

/// The one provider token of a signing key, shared by every connection that uses the key.
///
/// A token is renewed when it reaches `renewalAge` (inside Apple's window: at least 20 minutes,
/// at most 60), or earlier when APNs answers `ExpiredProviderToken` for it. A `Mutex` rather than an
/// actor: connections read it from their event loop once per batch of writes and must not suspend.
public final class APNSProviderTokenCache: Sendable {
    /// Apple: refresh no more often than every 20 minutes…
    public static let minimumRenewalAge: TimeInterval = 20 * 60
    /// …and at least every 60 minutes; older tokens are rejected with `ExpiredProviderToken`.
    public static let maximumTokenAge: TimeInterval = 60 * 60

    private let signingKey: APNSSigningKey
    private let clock: any WallClock
    private let renewalAge: TimeInterval
    private let state: Mutex<APNSProviderToken?>

    /// - Parameter renewalAge: the age at which a new token is signed; clamped to 20...59 minutes.
    public init(signingKey: APNSSigningKey, clock: any WallClock, renewalAge: TimeInterval = 50 * 60) {
        self.signingKey = signingKey
        self.clock = clock
        self.renewalAge = min(max(renewalAge, Self.minimumRenewalAge), Self.maximumTokenAge - 60)
        self.state = Mutex(nil)
    }

    /// The token to use now, signing a new one if there is none or it reached the renewal age.
    public func currentToken() throws(APNSError) -> APNSProviderToken {
        let now = clock.now
        return try state.withLock { (cached: inout APNSProviderToken?) throws(APNSError) -> APNSProviderToken in
            if let token = cached, token.age(at: now) < renewalAge, token.age(at: now) >= 0 {
                return token
            }
            let token = try sign(at: now, generation: (cached?.generation ?? 0) + 1)
            cached = token
            return token
        }
    }

    /// Replaces the token of `generation` after APNs called it expired. Several connections report the
    /// same rejection; only the first renews, the others get the token it made.
    @discardableResult
    public func renew(rejectedGeneration generation: Int) throws(APNSError) -> APNSProviderToken {
        let now = clock.now
        return try state.withLock { (cached: inout APNSProviderToken?) throws(APNSError) -> APNSProviderToken in
            if let token = cached, token.generation != generation {
                return token
            }
            let token = try sign(at: now, generation: (cached?.generation ?? 0) + 1)
            cached = token
            return token
        }
    }

    private func sign(at now: Date, generation: Int) throws(APNSError) -> APNSProviderToken {
        do {
            return try APNSProviderToken(signingKey: signingKey, issuedAt: now, generation: generation)
        } catch {
            throw .tokenSigningFailed
        }
    }
}
