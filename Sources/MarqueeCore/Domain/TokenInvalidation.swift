import Foundation

/// A 410 from APNs (`Unregistered`, `ExpiredToken`) with the time APNs last confirmed the token
/// invalid. The token is retired only when that time is newer than its last registration: a device
/// that registered again after APNs' verdict has a token that works again.
public struct TokenInvalidation: Sendable, Hashable {
    public var reason: APNSErrorReason
    /// APNs' `timestamp` in the 410 body: milliseconds since 1970.
    public var apnsTimestampMilliseconds: Int64

    public init(reason: APNSErrorReason, apnsTimestampMilliseconds: Int64) {
        self.reason = reason
        self.apnsTimestampMilliseconds = apnsTimestampMilliseconds
    }

    /// APNs' verdict as a date.
    public var invalidSince: Date {
        Date(timeIntervalSince1970: Double(apnsTimestampMilliseconds) / 1000)
    }

    /// Whether the verdict retires a token last registered at `lastRegisteredAt`.
    public func retires(tokenLastRegisteredAt lastRegisteredAt: Date) -> Bool {
        invalidSince > lastRegisteredAt
    }
}
