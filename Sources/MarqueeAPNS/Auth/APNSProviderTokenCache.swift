import Foundation
import MarqueeCore
import Synchronization

/// The one provider token of a signing key, shared by every connection that uses the key.
///
/// Tokens are issued on fixed windows of `renewalAge` counted from the Unix epoch: the token's `iat`
/// is the start of the window it was signed in, and the next window's start renews it. Every process
/// signing for the key therefore signs the same claims and renews at the same moment, however far
/// apart they started, so APNs sees one new token per key per window and not one per replica (it
/// answers `TooManyProviderTokenUpdates` to more, and has been seen to count per IP address across
/// keys, `apns-reference.md` §6a). A token is at most `renewalAge` old when it is used, inside
/// Apple's rule: renewed no more often than every 20 minutes and at least every 60.
///
/// After APNs answers `ExpiredProviderToken` the token is replaced at once with one issued now,
/// since signing the window's `iat` again would repeat the claims APNs just refused; the window's
/// start realigns it. A `Mutex` rather than an actor: connections read it from their event loop once
/// per batch of writes and must not suspend.
public final class APNSProviderTokenCache: Sendable {
    /// Apple: refresh no more often than every 20 minutes…
    public static let minimumRenewalAge: TimeInterval = 20 * 60
    /// …and at least every 60 minutes; older tokens are rejected with `ExpiredProviderToken`.
    public static let maximumTokenAge: TimeInterval = 60 * 60

    private let signingKey: APNSSigningKey
    private let clock: any WallClock
    /// Whole seconds, as `iat` is.
    private let renewalAge: Int64
    private let state: Mutex<APNSProviderToken?>

    /// - Parameter renewalAge: the length of a token window, the age at which a token is renewed;
    ///   clamped to 20...59 minutes and rounded down to whole seconds. Processes that are to present
    ///   one token must use the same value.
    public init(signingKey: APNSSigningKey, clock: any WallClock, renewalAge: TimeInterval = 50 * 60) {
        self.signingKey = signingKey
        self.clock = clock
        let clamped = min(max(renewalAge, Self.minimumRenewalAge), Self.maximumTokenAge - 60)
        self.renewalAge = Int64(clamped.rounded(.down))
        self.state = Mutex(nil)
    }

    /// The start of the token window `now` falls in: the `iat` every process signs in it.
    public func windowStart(at now: Date) -> Date {
        let seconds = Int64(now.timeIntervalSince1970.rounded(.down))
        let start = seconds - ((seconds % renewalAge) + renewalAge) % renewalAge
        return Date(timeIntervalSince1970: TimeInterval(start))
    }

    /// When the token current at `now` is renewed: the start of the next window.
    public func nextRenewal(after now: Date) -> Date {
        windowStart(at: now).addingTimeInterval(TimeInterval(renewalAge))
    }

    /// The token to use now, signing the window's token if the cached one is from an earlier window
    /// (or, after the clock went back, from a later one).
    public func currentToken() throws(APNSError) -> APNSProviderToken {
        let now = clock.now
        let start = windowStart(at: now)
        return try state.withLock { (cached: inout APNSProviderToken?) throws(APNSError) -> APNSProviderToken in
            if let token = cached, token.issuedAt >= start, token.age(at: now) >= 0 {
                return token
            }
            let token = try sign(issuedAt: start, generation: (cached?.generation ?? 0) + 1)
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
            let token = try sign(issuedAt: now, generation: (cached?.generation ?? 0) + 1)
            cached = token
            return token
        }
    }

    private func sign(issuedAt: Date, generation: Int) throws(APNSError) -> APNSProviderToken {
        do {
            return try APNSProviderToken(signingKey: signingKey, issuedAt: issuedAt, generation: generation)
        } catch {
            throw .tokenSigningFailed
        }
    }
}
