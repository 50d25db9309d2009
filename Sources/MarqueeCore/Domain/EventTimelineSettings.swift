/// How an event's timeline runs by itself: its channels created a lead time before the planned
/// start, the start sent at the planned start, the end sent before Apple's 8-hour limit if nobody
/// sent one, and the event closed (its channels deleted) after the Lock Screen's 4 hours. Kept on
/// the event as the producer gave it: `nil` overrides take the server's defaults when the timeline
/// is planned, so a changed default reaches the steps not yet done.
public struct EventTimelineSettings: Sendable, Hashable {
    /// Whether the timeline runs. Turning it off cancels the steps not yet done.
    public var automatic: Bool
    /// The start to send at the planned start.
    public var start: TimelineStart?
    /// How long before the planned start the channels are created.
    public var channelLeadSeconds: Int?
    /// How long after the start the end is sent if nobody sent one (at most Apple's 8 hours).
    public var endAfterSeconds: Int?
    /// How long after the end (whoever sent it) the event is closed and its channels deleted.
    public var deleteChannelsAfterSeconds: Int?

    public init(
        automatic: Bool,
        start: TimelineStart? = nil,
        channelLeadSeconds: Int? = nil,
        endAfterSeconds: Int? = nil,
        deleteChannelsAfterSeconds: Int? = nil
    ) {
        self.automatic = automatic
        self.start = start
        self.channelLeadSeconds = channelLeadSeconds
        self.endAfterSeconds = endAfterSeconds
        self.deleteChannelsAfterSeconds = deleteChannelsAfterSeconds
    }
}

/// The start an event's timeline sends: what `POST /v1/events/{eventKey}/starts` takes, with the
/// environment optional (every environment of the event when absent). Apple's objects pass through.
public struct TimelineStart: Sendable, Hashable {
    public var environment: APNSEnvironment?
    public var attributes: JSONObject
    public var contentState: JSONObject
    public var alert: JSONObject
    public var tags: [String]
    public var userIDs: [String]
    public var tokens: [String]
    public var inputPushToken: Bool

    public init(
        environment: APNSEnvironment? = nil,
        attributes: JSONObject,
        contentState: JSONObject,
        alert: JSONObject,
        tags: [String] = [],
        userIDs: [String] = [],
        tokens: [String] = [],
        inputPushToken: Bool = false
    ) {
        self.environment = environment
        self.attributes = attributes
        self.contentState = contentState
        self.alert = alert
        self.tags = tags
        self.userIDs = userIDs
        self.tokens = tokens
        self.inputPushToken = inputPushToken
    }
}

extension EventTimelineSettings {
    /// The settings as stored with the event.
    public var jsonValue: JSONValue {
        var object = JSONObject()
        object["automatic"] = .bool(automatic)
        if let start { object["start"] = start.jsonValue }
        if let channelLeadSeconds { object["channelLeadSeconds"] = .integer(Int64(channelLeadSeconds)) }
        if let endAfterSeconds { object["endAfterSeconds"] = .integer(Int64(endAfterSeconds)) }
        if let deleteChannelsAfterSeconds {
            object["deleteChannelsAfterSeconds"] = .integer(Int64(deleteChannelsAfterSeconds))
        }
        return .object(object)
    }

    /// Reads stored settings; `nil` for anything this version did not write.
    public init?(json value: JSONValue) {
        guard case .bool(let automatic)? = value["automatic"] else { return nil }
        func seconds(_ key: String) -> Int?? {
            switch value[key] {
            case .none: .some(nil)
            case .integer(let seconds)?: .some(Int(seconds))
            default: nil
            }
        }
        guard let lead = seconds("channelLeadSeconds"), let endAfter = seconds("endAfterSeconds"),
            let deleteAfter = seconds("deleteChannelsAfterSeconds")
        else { return nil }
        var start: TimelineStart?
        if let stored = value["start"] {
            guard let parsed = TimelineStart(json: stored) else { return nil }
            start = parsed
        }
        self.init(
            automatic: automatic,
            start: start,
            channelLeadSeconds: lead,
            endAfterSeconds: endAfter,
            deleteChannelsAfterSeconds: deleteAfter
        )
    }
}

extension TimelineStart {
    public var jsonValue: JSONValue {
        var object = JSONObject()
        if let environment { object["environment"] = .string(environment.rawValue) }
        object["attributes"] = .object(attributes)
        object["contentState"] = .object(contentState)
        object["alert"] = .object(alert)
        object["tags"] = .array(tags.map(JSONValue.string))
        object["userIDs"] = .array(userIDs.map(JSONValue.string))
        object["tokens"] = .array(tokens.map(JSONValue.string))
        object["inputPushToken"] = .bool(inputPushToken)
        return .object(object)
    }

    public init?(json value: JSONValue) {
        guard case .object(let attributes)? = value["attributes"],
            case .object(let contentState)? = value["contentState"],
            case .object(let alert)? = value["alert"]
        else { return nil }
        var environment: APNSEnvironment?
        if case .string(let name)? = value["environment"] {
            guard let parsed = APNSEnvironment(rawValue: name) else { return nil }
            environment = parsed
        }
        func strings(_ key: String) -> [String] {
            guard case .array(let items)? = value[key] else { return [] }
            return items.compactMap { if case .string(let text) = $0 { text } else { nil } }
        }
        self.init(
            environment: environment,
            attributes: attributes,
            contentState: contentState,
            alert: alert,
            tags: strings("tags"),
            userIDs: strings("userIDs"),
            tokens: strings("tokens"),
            inputPushToken: value["inputPushToken"] == .bool(true)
        )
    }
}
