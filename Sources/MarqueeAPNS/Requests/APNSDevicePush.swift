import Foundation
import MarqueeCore
import NIOCore

/// A push to one device: `POST /3/device/<token>`. Most are Live Activity pushes
/// (`apns-push-type: liveactivity`, `apns-topic: <bundle>.push-type.liveactivity`) to a
/// push-to-start or update token; a background push (`background`, the bare bundle ID, priority 5)
/// goes to the app's own device token to wake it (`background(deviceToken:bundleID:payload:)`).
///
/// The body is a `ByteBuffer` encoded once: a fan-out sends the same buffer to every device without
/// copying it.
public struct APNSDevicePush: Sendable {
    /// `/3/device/<token>`, built once per push rather than on the event loop; the token is read
    /// back from it, so a push holds one string of its own.
    private(set) var path: String
    /// What every device of a fan-out shares (topic, body, collapse ID, kind), behind one reference:
    /// a push is copied from the page to the queue, the stream table and back, and each copy then
    /// retains one object rather than four.
    private let shared: Shared
    public var priority: APNSPriority
    /// `nil` leaves `apns-expiration` out (APNs' default storage).
    public var expiration: APNSExpiration?
    /// `apns-id`; APNs generates one when it is `nil` and returns it either way.
    public var apnsID: UUID?

    /// The push-to-start or update token, as hex of any length.
    public var deviceToken: String { String(path.dropFirst(Self.pathPrefix.count)) }
    /// `apns-topic`.
    public var topic: String { shared.topic }
    /// The JSON body, at most `APNSPayloadLimit.device` bytes.
    public var payload: ByteBuffer { shared.payload }
    /// `apns-collapse-id`, at most 64 bytes.
    public var collapseID: String? { shared.collapseID }
    /// Whether the body starts, updates or ends the activity: the client's metrics count by it.
    public var kind: APNSPushKind { shared.kind }

    private final class Shared: Sendable {
        let topic: String
        let payload: ByteBuffer
        let collapseID: String?
        let kind: APNSPushKind

        init(topic: String, payload: ByteBuffer, collapseID: String?, kind: APNSPushKind) {
            self.topic = topic
            self.payload = payload
            self.collapseID = collapseID
            self.kind = kind
        }
    }

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

    /// A background (silent) push that wakes the app on the device whose app device token this is
    /// (`apns-reference.md` §8a): `apns-push-type: background`, the bare bundle ID as topic,
    /// priority 5 (10 is an error for this type). The body's `aps` must hold only
    /// `"content-available": 1`; the caller's own keys sit beside it.
    public static func background(
        deviceToken: String,
        bundleID: String,
        payload: ByteBuffer,
        expiration: APNSExpiration? = nil,
        collapseID: String? = nil,
        apnsID: UUID? = nil
    ) throws(APNSError) -> APNSDevicePush {
        try APNSDevicePush(
            deviceToken: deviceToken,
            topic: APNSPushType.background.topic(forBundleID: bundleID),
            payload: payload,
            priority: .normal,
            expiration: expiration,
            collapseID: collapseID,
            apnsID: apnsID,
            kind: .background
        )
    }

    /// `apns-push-type`: what the kind of push asks of APNs.
    var pushType: APNSPushType { kind == .background ? .background : .liveactivity }

    /// The same push for another device: the fan-out path, sharing topic and body.
    public func sending(to deviceToken: String) throws(APNSError) -> APNSDevicePush {
        try Self.validate(deviceToken: deviceToken)
        var copy = self
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
        guard kind != .background || priority == .normal else {
            throw .invalidRequest("background pushes use priority 5 (APNs refuses 10 for them)")
        }
        if let collapseID {
            try APNSHeaderValue.validate(collapseID, name: "apns-collapse-id")
            guard collapseID.utf8.count <= APNSPayloadLimit.collapseIDBytes else {
                throw .invalidRequest("apns-collapse-id is over \(APNSPayloadLimit.collapseIDBytes) bytes")
            }
        }
        self.path = Self.pathPrefix + deviceToken
        self.shared = Shared(topic: topic, payload: payload, collapseID: collapseID, kind: kind)
        self.priority = priority
        self.expiration = expiration
        self.apnsID = apnsID
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
