/// Which registrations Marquee already has: a token is registered again only when what would be
/// sent changed (a rotated push-to-start or update token, a new device token riding along with
/// the push-to-start token), never the same one twice in a row. ActivityKit hands the app its
/// current tokens at every launch; the ledger turns those repeats into nothing.
///
/// It compares whole requests (method, path, body), so any field that changes (the device token,
/// `frequentPushesEnabled`) is a reason to send, and nothing else is.
public struct TokenLedger: Sendable, Equatable, Codable {
    /// The latest tokens the app handed over, hex, registered or not.
    public private(set) var pushToStartToken: String?
    public private(set) var deviceToken: String?
    /// What Marquee accepted last, per registration.
    private var accepted: [Slot: Fingerprint] = [:]

    /// One registration that replaces its predecessor.
    public enum Slot: Sendable, Hashable, Codable {
        case pushToStart
        case updateToken(activityID: String)
    }

    struct Fingerprint: Sendable, Equatable, Codable {
        var method: String
        var path: String
        var body: [UInt8]

        init(_ request: MarqueeHTTPRequest) {
            method = request.method
            path = request.path
            body = request.body.map { Array($0) } ?? []
        }
    }

    public init() {}

    /// The app's push-to-start token is now `hex`.
    public mutating func noteCurrent(pushToStartToken hex: String) {
        pushToStartToken = hex
    }

    /// The app's device token is now `hex`.
    public mutating func noteCurrent(deviceToken hex: String) {
        deviceToken = hex
    }

    /// Whether `request` would tell Marquee nothing new for `slot`.
    public func isAccepted(_ request: MarqueeHTTPRequest, for slot: Slot) -> Bool {
        accepted[slot] == Fingerprint(request)
    }

    /// Marquee accepted `request` for `slot`.
    public mutating func recordAccepted(_ request: MarqueeHTTPRequest, for slot: Slot) {
        accepted[slot] = Fingerprint(request)
    }

    /// Marquee does not know the registration any more (it answered 404 for the token): send it again.
    public mutating func forget(_ slot: Slot) {
        accepted[slot] = nil
    }

    /// Drops the update tokens of activities no longer listed: their activity is gone.
    public mutating func keepUpdateTokens(of activityIDs: Set<String>) {
        accepted = accepted.filter { slot, _ in
            guard case .updateToken(let activityID) = slot else { return true }
            return activityIDs.contains(activityID)
        }
    }
}
