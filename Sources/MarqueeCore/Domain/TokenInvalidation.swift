import Foundation

/// A 410 from APNs (`Unregistered`, `ExpiredToken`) with the time APNs last confirmed the token
/// invalid. The token is retired only when that time is newer than its last registration: a device
/// that registered again after APNs' verdict has a token that works again.
public struct TokenInvalidation: Sendable, Hashable {
    public var reason: APNSErrorReason
    /// APNs' `timestamp` in the 410 body: milliseconds since 1970.
    public var apnsTimestampMilliseconds: Int64
    /// The token (hex) APNs refused, when known: a row that has moved to another token since (its
    /// device's token rotated) is not retired by a late 410 for the one it had. `nil` judges the
    /// row whatever its token.
    public var token: String?

    public init(reason: APNSErrorReason, apnsTimestampMilliseconds: Int64, token: String? = nil) {
        self.reason = reason
        self.apnsTimestampMilliseconds = apnsTimestampMilliseconds
        self.token = token
    }

    /// APNs' verdict as a date.
    public var invalidSince: Date {
        Date(timeIntervalSince1970: Double(apnsTimestampMilliseconds) / 1000)
    }

    /// Whether the verdict retires a token last registered at `lastRegisteredAt`.
    public func retires(tokenLastRegisteredAt lastRegisteredAt: Date) -> Bool {
        invalidSince > lastRegisteredAt
    }

    /// Whether the verdict ends an activity whose current update token is `currentToken`, received
    /// at `receivedAt`: only when it names that token (a late 410 for the one the device replaced
    /// says nothing of the new one) and APNs saw it invalid at or after its receipt (a token the
    /// device sent again after APNs' verdict works again).
    public func endsActivity(currentUpdateToken currentToken: String, receivedAt: Date) -> Bool {
        (token == nil || token == currentToken) && invalidSince >= receivedAt
    }
}
