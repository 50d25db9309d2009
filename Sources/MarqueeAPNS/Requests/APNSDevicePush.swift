import Foundation
import MarqueeCore
import NIOCore

/// A Live Activity push to one device: `POST /3/device/<token>` with `apns-push-type: liveactivity`
/// and `apns-topic: <bundle>.push-type.liveactivity`.
///
/// The body is a `ByteBuffer` encoded once: a fan-out sends the same buffer to every device without
/// copying it.
public struct APNSDevicePush: Sendable {
    /// The push-to-start or update token, as hex of any length.
    public private(set) var deviceToken: String
    /// `/3/device/<token>`, built once per push rather than on the event loop.
    private(set) var path: String
    /// `apns-topic`.
    public let topic: String
    /// The JSON body, at most `APNSPayloadLimit.device` bytes.
    public let payload: ByteBuffer
    public var priority: APNSPriority
    /// `nil` leaves `apns-expiration` out (APNs' default storage).
    public var expiration: APNSExpiration?
    /// `apns-collapse-id`, at most 64 bytes.
    public let collapseID: String?
    /// `apns-id`; APNs generates one when it is `nil` and returns it either way.
    public var apnsID: UUID?
    /// Whether the body starts, updates or ends the activity: the client's metrics count by it.
    public let kind: APNSPushKind

    /// A push with a pre-encoded body, checked against the device limit.
    ///
    /// - Parameter kind: what the body does; `nil` reads it from the body's `aps.event` (once per
    ///   push built this way, not per copy made with `sending(to:)`).
    public init(
        deviceToken: String,
        bundleID: String,
        payload: ByteBuffer,
        priority: APNSPriority = .immediate,
        expiration: APNSExpiration? = nil,
        collapseID: String? = nil,
        apnsID: UUID? = nil,
        kind: APNSPushKind? = nil
    ) throws(APNSError) {
        try self.init(
            deviceToken: deviceToken,
            topic: APNSPushType.liveactivity.topic(forBundleID: bundleID),
            payload: payload,
            priority: priority,
            expiration: expiration,
            collapseID: collapseID,
            apnsID: apnsID,
            kind: kind ?? APNSPushKind.declared(by: payload)
        )
    }

    /// A push built from a typed Live Activity payload.
    public init(
        deviceToken: String,
        bundleID: String,
        payload: LiveActivityPayload,
        priority: APNSPriority = .immediate,
        expiration: APNSExpiration? = nil,
        collapseID: String? = nil,
        apnsID: UUID? = nil
    ) throws(APNSError) {
        try self.init(
            deviceToken: deviceToken,
            bundleID: bundleID,
            payload: try payload.encodedBuffer(limit: APNSPayloadLimit.device),
            priority: priority,
            expiration: expiration,
            collapseID: collapseID,
            apnsID: apnsID,
            kind: payload.kind
        )
    }

    /// The same push for another device: the fan-out path, sharing topic and body.
    public func sending(to deviceToken: String) throws(APNSError) -> APNSDevicePush {
        try Self.validate(deviceToken: deviceToken)
        var copy = self
        copy.deviceToken = deviceToken
        copy.path = Self.pathPrefix + deviceToken
        return copy
    }

    private init(
        deviceToken: String,
        topic: String,
        payload: ByteBuffer,
        priority: APNSPriority,
        expiration: APNSExpiration?,
        collapseID: String?,
        apnsID: UUID?,
        kind: APNSPushKind
    ) throws(APNSError) {
        try Self.validate(deviceToken: deviceToken)
        try APNSHeaderValue.validate(topic, name: "apns-topic")
        guard payload.readableBytes > 0 else { throw .invalidRequest("the payload is empty") }
        guard payload.readableBytes <= APNSPayloadLimit.device else {
            throw .payloadTooLarge(size: payload.readableBytes, limit: APNSPayloadLimit.device)
        }
        guard priority != .low else { throw .invalidRequest("Live Activity device pushes use priority 5 or 10") }
        if let collapseID {
            try APNSHeaderValue.validate(collapseID, name: "apns-collapse-id")
            guard collapseID.utf8.count <= APNSPayloadLimit.collapseIDBytes else {
                throw .invalidRequest("apns-collapse-id is over \(APNSPayloadLimit.collapseIDBytes) bytes")
            }
        }
        self.deviceToken = deviceToken
        self.path = Self.pathPrefix + deviceToken
        self.topic = topic
        self.payload = payload
        self.priority = priority
        self.expiration = expiration
        self.collapseID = collapseID
        self.apnsID = apnsID
        self.kind = kind
    }

    private static let pathPrefix = "/3/device/"

    static func validate(deviceToken: String) throws(APNSError) {
        guard !deviceToken.isEmpty,
            deviceToken.utf8.allSatisfy({ $0 &- 48 < 10 || $0 &- 97 < 6 || $0 &- 65 < 6 })
        else {
            throw .invalidRequest("a device token is hex digits")
        }
    }
}

extension LiveActivityPayload {
    /// What the payload does, for the client's metrics.
    var kind: APNSPushKind {
        switch event {
        case .start: .start
        case .update: .update
        case .end: .end
        }
    }
}
