import Foundation
import MarqueeCore
import NIOCore
import NIOHPACK

/// One HTTP/2 request of the client, in the form the connection handler writes. A closed set of
/// cases rather than a generic request type, so that the hot path (device pushes) builds its header
/// block straight from the push without intermediate collections.
enum APNSOperation: Sendable {
    case device(APNSDevicePush)
    case broadcast(APNSBroadcast)
    case manageChannels(APNSChannelRequest)

    /// What the client's metrics count it as; `nil` for channel management, which is no push.
    var pushKind: APNSPushKind? {
        switch self {
        case .device(let push): push.kind
        case .broadcast: .broadcast
        case .manageChannels: nil
        }
    }

    /// Whether sending it again after an uncertain attempt (written, never answered) is harmless.
    /// A start would show a second Live Activity and a channel creation would create a second
    /// channel, so neither; updates and ends carry a timestamp the device drops repeats by, a
    /// broadcast likewise, and channel reads, lists and deletes are idempotent.
    var mayResendWhenUncertain: Bool {
        switch self {
        case .device(let push): push.kind != .start
        case .broadcast: true
        case .manageChannels(let request): request.method != .post
        }
    }

    var body: ByteBuffer? {
        switch self {
        case .device(let push): push.payload
        case .broadcast(let broadcast): broadcast.payload
        case .manageChannels(let request): request.body
        }
    }

    /// A device push's header fields, as the framer encodes them (`APNSDeviceHeaderFields`).
    static func deviceHeaderFields(
        _ push: APNSDevicePush,
        scheme: String,
        authority: String,
        authorization: String
    ) -> APNSDeviceHeaderFields {
        APNSDeviceHeaderFields(
            path: push.path,
            repeating: .init(
                scheme: scheme,
                authority: authority,
                authorization: authorization,
                pushType: push.pushType.rawValue,
                topic: push.topic,
                priority: push.priority.headerValue,
                expiration: push.expiration?.headerValue,
                collapseID: push.collapseID
            ),
            apnsID: push.apnsID?.lowercasedText
        )
    }

    /// The header block. Stable values (`authorization`, push type, topic, priority, collapse ID)
    /// are indexable so that HPACK sends them as one-byte references after the first request;
    /// per-request values (`:path`, `apns-id`) are not, so they do not churn APNs' small dynamic
    /// table. A device push's block is the framer's to put together from its fields (the handler
    /// writes those); this one is the same block, for everything else that wants it.
    func headers(scheme: String, authority: String, authorization: String, now: Date) -> HPACKHeaders {
        var headers = HPACKHeaders()
        headers.reserveCapacity(11)
        switch self {
        case .device(let push):
            headers =
                Self.deviceHeaderFields(push, scheme: scheme, authority: authority, authorization: authorization)
                .headers
        case .broadcast(let broadcast):
            headers.add(name: ":method", value: "POST")
            headers.add(name: ":scheme", value: scheme)
            headers.add(name: ":authority", value: authority)
            headers.add(name: ":path", value: "/4/broadcasts/apps/" + broadcast.bundleID)
            headers.add(name: "authorization", value: authorization)
            headers.add(name: "apns-push-type", value: "liveactivity")
            headers.add(name: "apns-channel-id", value: broadcast.channelID)
            headers.add(name: "apns-priority", value: broadcast.priority.headerValue)
            headers.add(name: "apns-expiration", value: broadcast.expirationHeaderValue(now: now))
            if let requestID = broadcast.requestID {
                headers.add(name: "apns-request-id", value: requestID.lowercasedText, indexing: .nonIndexable)
            }
            headers.add(name: "content-type", value: "application/json")
        case .manageChannels(let request):
            headers.add(name: ":method", value: request.method.rawValue)
            headers.add(name: ":scheme", value: scheme)
            headers.add(name: ":authority", value: authority)
            headers.add(name: ":path", value: request.path)
            headers.add(name: "authorization", value: authorization)
            if let channelID = request.channelID {
                headers.add(name: "apns-channel-id", value: channelID)
            }
            headers.add(
                name: "apns-request-id",
                value: request.requestID.lowercasedText,
                indexing: .nonIndexable
            )
            if request.body != nil {
                headers.add(name: "content-type", value: "application/json")
            }
        }
        return headers
    }
}

/// A channel-management request on `api-manage-broadcast…`.
struct APNSChannelRequest: Sendable {
    enum Method: String, Sendable {
        case get = "GET"
        case post = "POST"
        case delete = "DELETE"
    }

    var method: Method
    var path: String
    var channelID: String?
    var requestID: UUID
    var body: ByteBuffer?
}

/// What came back on a stream.
struct APNSResponse: Sendable {
    var status: Int
    var apnsID: String?
    var requestID: String?
    var uniqueID: String?
    var channelID: String?
    var body: ByteBuffer?

    init(
        status: Int,
        apnsID: String? = nil,
        requestID: String? = nil,
        uniqueID: String? = nil,
        channelID: String? = nil,
        body: ByteBuffer? = nil
    ) {
        self.status = status
        self.apnsID = apnsID
        self.requestID = requestID
        self.uniqueID = uniqueID
        self.channelID = channelID
        self.body = body
    }

    var isSuccess: Bool { (200..<300).contains(status) }

    /// The error body `{"reason":…,"timestamp":…}` as a typed rejection.
    var rejection: APNSRejection {
        var reason = APNSErrorReason.unknown("")
        var timestamp: Int64?
        if let body, body.readableBytes > 0,
            let object = try? JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any]
        {
            if let text = object["reason"] as? String { reason = APNSErrorReason(reasonString: text) }
            if let number = object["timestamp"] as? NSNumber { timestamp = number.int64Value }
        }
        return APNSRejection(
            status: status,
            reason: reason,
            apnsID: apnsID,
            requestID: requestID,
            uniqueID: uniqueID,
            timestampMilliseconds: timestamp
        )
    }
}
