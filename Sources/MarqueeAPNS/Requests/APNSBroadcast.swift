import Foundation
import MarqueeCore
import NIOCore

/// A broadcast on a channel: `POST /4/broadcasts/apps/<bundle>` with `apns-channel-id`.
/// Broadcasts update and end activities; they cannot start one.
public struct APNSBroadcast: Sendable {
    /// The bare bundle ID (a push-type suffix gives `TopicDisallowed`).
    public let bundleID: String
    public let channelID: String
    /// The channel's policy decides `apns-expiration`: No Message Stored channels only accept `0`.
    public let storagePolicy: MessageStoragePolicy
    /// The JSON body, at most `APNSPayloadLimit.broadcast` bytes.
    public let payload: ByteBuffer
    /// 1, 5 or 10.
    public var priority: APNSPriority
    /// Ignored (forced to `immediately`) on No Message Stored channels. `nil` on a stored channel
    /// keeps the message for as long as APNs allows (8 hours).
    public var expiration: APNSExpiration?
    /// `apns-request-id`; APNs generates one when it is `nil`.
    public var requestID: UUID?

    public init(
        bundleID: String,
        channelID: String,
        storagePolicy: MessageStoragePolicy,
        payload: ByteBuffer,
        priority: APNSPriority = .immediate,
        expiration: APNSExpiration? = nil,
        requestID: UUID? = nil
    ) throws(APNSError) {
        try APNSHeaderValue.validate(bundleID, name: "the bundle ID")
        try APNSHeaderValue.validate(channelID, name: "apns-channel-id")
        guard payload.readableBytes > 0 else { throw .invalidRequest("the payload is empty") }
        guard payload.readableBytes <= APNSPayloadLimit.broadcast else {
            throw .payloadTooLarge(size: payload.readableBytes, limit: APNSPayloadLimit.broadcast)
        }
        self.bundleID = bundleID
        self.channelID = channelID
        self.storagePolicy = storagePolicy
        self.payload = payload
        self.priority = priority
        self.expiration = expiration
        self.requestID = requestID
    }

    /// A broadcast built from a typed Live Activity payload (update or end).
    public init(
        bundleID: String,
        channelID: String,
        storagePolicy: MessageStoragePolicy,
        payload: LiveActivityPayload,
        priority: APNSPriority = .immediate,
        expiration: APNSExpiration? = nil,
        requestID: UUID? = nil
    ) throws(APNSError) {
        if case .start = payload.event {
            throw .invalidRequest("a broadcast cannot start a Live Activity")
        }
        try self.init(
            bundleID: bundleID,
            channelID: channelID,
            storagePolicy: storagePolicy,
            payload: try payload.encodedBuffer(limit: APNSPayloadLimit.broadcast),
            priority: priority,
            expiration: expiration,
            requestID: requestID
        )
    }

    /// The `apns-expiration` value sent at `now`.
    func expirationHeaderValue(now: Date) -> String {
        switch storagePolicy {
        case .noMessageStored:
            return APNSExpiration.immediately.headerValue
        case .mostRecentMessageStored:
            let expiration =
                expiration ?? .at(now.addingTimeInterval(TimeInterval(MessageStoragePolicy.maximumStorageSeconds)))
            return expiration.headerValue
        }
    }
}
