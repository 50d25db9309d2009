import Foundation
import MarqueeCore

/// APNs' answer to a request it refused: the reason, the status and the identifiers APNs echoed.
public struct APNSRejection: Sendable, Hashable, CustomStringConvertible {
    public var status: Int
    /// The documented reason, or `unknown` with APNs' own string; `unknown("")` when the body had none.
    public var reason: APNSErrorReason
    /// `apns-id` (device pushes).
    public var apnsID: String?
    /// `apns-request-id` (broadcasts and channel management).
    public var requestID: String?
    /// `apns-unique-id`.
    public var uniqueID: String?
    /// A 410's `timestamp`: milliseconds since 1970 at which APNs last confirmed the token invalid.
    public var timestampMilliseconds: Int64?

    public init(
        status: Int,
        reason: APNSErrorReason,
        apnsID: String? = nil,
        requestID: String? = nil,
        uniqueID: String? = nil,
        timestampMilliseconds: Int64? = nil
    ) {
        self.status = status
        self.reason = reason
        self.apnsID = apnsID
        self.requestID = requestID
        self.uniqueID = uniqueID
        self.timestampMilliseconds = timestampMilliseconds
    }

    /// When APNs last saw the token invalid (410 only).
    public var tokenInvalidSince: Date? {
        timestampMilliseconds.map { Date(timeIntervalSince1970: TimeInterval($0) / 1000) }
    }

    /// What a caller should do about it.
    public var failureClass: APNSFailureClass {
        switch reason {
        case .expiredProviderToken:
            return .renewTokenAndRetry
        case .unregistered, .expiredToken, .badDeviceToken, .deviceTokenNotForTopic:
            return .tokenDead
        case .channelNotRegistered, .badChannelId:
            return .channelGone
        case .broadcastFeatureNotEnabled, .featureNotEnabled:
            return .appMisconfigured
        case .tooManyRequests, .tooManyProviderTokenUpdates, .internalServerError, .serviceUnavailable, .shutdown:
            return .retryLater
        default:
            if status == 410 { return .tokenDead }
            if status == 429 || status >= 500 { return .retryLater }
            return .requestRejected
        }
    }

    public var description: String {
        var text =
            "APNs rejected the request: \(status) \(reason.reasonString.isEmpty ? "(no reason)" : reason.reasonString)"
        if let apnsID { text += " apns-id \(apnsID)" }
        if let requestID { text += " apns-request-id \(requestID)" }
        if let timestampMilliseconds { text += " timestamp \(timestampMilliseconds)" }
        return text
    }
}
