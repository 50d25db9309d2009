import Foundation

/// The `aps` dictionary of a Live Activity push: start, update or end.
///
/// `content-state` and `attributes` are passed through byte for byte: ActivityKit decodes them with
/// default `JSONDecoder` strategies into the app's own types, so Marquee never renames a key or
/// re-types a number. Times are whole Unix seconds on the wire (never milliseconds, never Apple's
/// 2001 reference date).
public struct LiveActivityPayload: Sendable, Hashable {
    /// What the push does to the activity, with the fields only that event may carry.
    public enum Event: Sendable, Hashable {
        /// Starts an activity through a push-to-start token. Only device pushes can start activities.
        case start(Start)
        case update
        /// Ends the activity; `dismissalDate` says when the system removes it from the Lock Screen
        /// (a past date removes it at once; at most four hours after the end).
        case end(dismissalDate: Date?)
    }

    /// The fields of a start push.
    public struct Start: Sendable, Hashable {
        /// The name of the app's `ActivityAttributes` type.
        public var attributesType: String
        /// The static attributes, passed through unchanged.
        public var attributes: JSONObject
        /// How the started activity receives its later updates.
        public var updates: StartUpdates

        public init(attributesType: String, attributes: JSONObject, updates: StartUpdates = .none) {
            self.attributesType = attributesType
            self.attributes = attributes
            self.updates = updates
        }
    }

    /// How a remotely started activity (iOS 18+) is updated afterwards. One enum, so that a payload can
    /// never carry both `input-push-channel` and `input-push-token`.
    public enum StartUpdates: Sendable, Hashable {
        /// Neither key: the app reports the activity's update token itself.
        case none
        /// `input-push-channel`: the activity subscribes to this broadcast channel.
        case channel(String)
        /// `input-push-token: 1`: the system issues an update token to the app.
        case updateToken
    }

    public var event: Event
    /// When the content was produced; the device ignores an update older than one it has applied.
    public var timestamp: Date
    /// The dynamic state, passed through unchanged.
    public var contentState: JSONObject
    /// Required for start (enforced by the `start` factory), optional otherwise.
    public var alert: LiveActivityAlert?
    /// When the activity turns stale unless another update arrives.
    public var staleDate: Date?
    /// Orders several activities of one app; the highest shows in the Dynamic Island.
    public var relevanceScore: Double?

    private init(
        event: Event,
        timestamp: Date,
        contentState: JSONObject,
        alert: LiveActivityAlert?,
        staleDate: Date?,
        relevanceScore: Double?
    ) {
        self.event = event
        self.timestamp = timestamp
        self.contentState = contentState
        self.alert = alert
        self.staleDate = staleDate
        self.relevanceScore = relevanceScore
    }

    /// A start push. APNs' device requires an alert on start, so it is not optional here.
    public static func start(
        _ start: Start,
        contentState: JSONObject,
        alert: LiveActivityAlert,
        timestamp: Date,
        staleDate: Date? = nil,
        relevanceScore: Double? = nil
    ) -> LiveActivityPayload {
        LiveActivityPayload(
            event: .start(start),
            timestamp: timestamp,
            contentState: contentState,
            alert: alert,
            staleDate: staleDate,
            relevanceScore: relevanceScore
        )
    }

    /// An update push.
    public static func update(
        contentState: JSONObject,
        timestamp: Date,
        alert: LiveActivityAlert? = nil,
        staleDate: Date? = nil,
        relevanceScore: Double? = nil
    ) -> LiveActivityPayload {
        LiveActivityPayload(
            event: .update,
            timestamp: timestamp,
            contentState: contentState,
            alert: alert,
            staleDate: staleDate,
            relevanceScore: relevanceScore
        )
    }

    /// An end push; send the final content state with it.
    public static func end(
        contentState: JSONObject,
        timestamp: Date,
        dismissalDate: Date? = nil,
        alert: LiveActivityAlert? = nil,
        staleDate: Date? = nil,
        relevanceScore: Double? = nil
    ) -> LiveActivityPayload {
        LiveActivityPayload(
            event: .end(dismissalDate: dismissalDate),
            timestamp: timestamp,
            contentState: contentState,
            alert: alert,
            staleDate: staleDate,
            relevanceScore: relevanceScore
        )
    }

    /// The whole push body, `{"aps":{...}}`, with keys in a fixed order.
    public var jsonObject: JSONObject {
        var aps = JSONObject()
        aps["timestamp"] = .integer(Self.unixSeconds(timestamp))
        switch event {
        case .start(let start):
            aps["event"] = "start"
            aps["attributes-type"] = .string(start.attributesType)
            aps["attributes"] = .object(start.attributes)
            aps["content-state"] = .object(contentState)
            switch start.updates {
            case .none: break
            case .channel(let channelID): aps["input-push-channel"] = .string(channelID)
            case .updateToken: aps["input-push-token"] = 1
            }
        case .update:
            aps["event"] = "update"
            aps["content-state"] = .object(contentState)
        case .end(let dismissalDate):
            aps["event"] = "end"
            aps["content-state"] = .object(contentState)
            if let dismissalDate { aps["dismissal-date"] = .integer(Self.unixSeconds(dismissalDate)) }
        }
        if let staleDate { aps["stale-date"] = .integer(Self.unixSeconds(staleDate)) }
        if let relevanceScore { aps["relevance-score"] = .number(relevanceScore) }
        if let alert { aps["alert"] = .object(alert.jsonObject) }
        return ["aps": .object(aps)]
    }

    /// The encoded body, checked against `limit` (`APNSPayloadLimit.device` for device pushes,
    /// `APNSPayloadLimit.broadcast` for broadcasts) before anything is sent.
    public func encoded(limit: Int) throws(LiveActivityPayloadError) -> [UInt8] {
        let bytes = jsonObject.jsonBytes
        guard bytes.count <= limit else { throw .tooLarge(size: bytes.count, limit: limit) }
        return bytes
    }

    /// The body of a device push (at most 4096 bytes).
    public func encodedForDevice() throws(LiveActivityPayloadError) -> [UInt8] {
        try encoded(limit: APNSPayloadLimit.device)
    }

    /// The body of a broadcast (at most 5120 bytes).
    public func encodedForBroadcast() throws(LiveActivityPayloadError) -> [UInt8] {
        try encoded(limit: APNSPayloadLimit.broadcast)
    }

    private static func unixSeconds(_ date: Date) -> Int64 {
        Int64(date.timeIntervalSince1970.rounded(.down))
    }
}
