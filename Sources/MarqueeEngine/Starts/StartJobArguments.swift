import Foundation
import MarqueeCore

/// What a start job carries in its `arguments`, fixed when it is created so that every worker (and
/// every resumption) sends the same bytes: the payload's parts, its timestamp, the channel.
struct StartJobArguments: Sendable, Hashable {
    var eventID: EventID
    var environment: APNSEnvironment
    var attributesType: String
    var attributes: JSONObject
    var contentState: JSONObject
    var alert: JSONObject
    var audience: StartAudience
    var inputPushToken: Bool
    /// The event's channel at APNs when the job was created; `nil` if it had none (then every
    /// device gets `input-push-token`).
    var apnsChannelID: String?
    var channelID: ChannelID?
    /// `aps.timestamp`, whole seconds.
    var timestamp: Int64
    /// The part of the audience a partition job sends to; `nil` on the job the API shows.
    var partition: AudiencePartition?
    /// The job whose uncertain tokens this job sends the start again (`resend-uncertain`): its
    /// audience is those tokens only.
    var uncertainOf: JobID?
    /// A start of late joiners (the late-join pump's), its audience the tokens it drained from the
    /// pending-start queue: what the funnel counts as "late joiners started".
    var lateJoin: Bool
    /// A start sent again to devices whose start ended uncertain and whose app then reported no
    /// activity there (`confirm`): its arguments say `"reason": "absent"`, which is how the funnel
    /// counts "absent then started".
    var absentRestart: Bool = false

    var jsonValue: JSONValue {
        var object = JSONObject()
        object["eventID"] = .string(eventID.description)
        object["environment"] = .string(environment.rawValue)
        object["attributesType"] = .string(attributesType)
        object["attributes"] = .object(attributes)
        object["contentState"] = .object(contentState)
        object["alert"] = .object(alert)
        object["audience"] = [
            "tags": .array(audience.tags.map(JSONValue.string)),
            "userIDs": .array(audience.userIDs.map(JSONValue.string)),
            "tokens": .array(audience.tokens.map(JSONValue.string)),
        ]
        object["inputPushToken"] = .bool(inputPushToken)
        if let apnsChannelID { object["apnsChannelID"] = .string(apnsChannelID) }
        if let channelID { object["channelID"] = .string(channelID.description) }
        object["timestamp"] = .integer(timestamp)
        if let partition {
            var range = JSONObject()
            if let after = partition.afterRowID { range["afterRowID"] = .integer(after) }
            if let through = partition.throughRowID { range["throughRowID"] = .integer(through) }
            object["partition"] = .object(range)
        }
        if let uncertainOf { object["uncertainOf"] = .string(uncertainOf.description) }
        // Only when set: every other start's arguments stay as they were.
        if lateJoin { object["lateJoin"] = .bool(true) }
        if absentRestart { object["reason"] = .string(PendingStartReason.absent.rawValue) }
        return .object(object)
    }

    init(
        eventID: EventID,
        environment: APNSEnvironment,
        attributesType: String,
        attributes: JSONObject,
        contentState: JSONObject,
        alert: JSONObject,
        audience: StartAudience,
        inputPushToken: Bool,
        apnsChannelID: String?,
        channelID: ChannelID?,
        timestamp: Int64,
        partition: AudiencePartition? = nil,
        uncertainOf: JobID? = nil,
        lateJoin: Bool = false
    ) {
        self.partition = partition
        self.uncertainOf = uncertainOf
        self.lateJoin = lateJoin
        self.eventID = eventID
        self.environment = environment
        self.attributesType = attributesType
        self.attributes = attributes
        self.contentState = contentState
        self.alert = alert
        self.audience = audience
        self.inputPushToken = inputPushToken
        self.apnsChannelID = apnsChannelID
        self.channelID = channelID
        self.timestamp = timestamp
    }

    struct Unreadable: Error, CustomStringConvertible {
        var description: String
    }

    init(_ value: JSONValue) throws {
        func string(_ key: String) throws -> String {
            guard case .string(let text)? = value[key] else {
                throw Unreadable(description: "start job arguments lack \(key)")
            }
            return text
        }
        func object(_ key: String) throws -> JSONObject {
            guard case .object(let object)? = value[key] else {
                throw Unreadable(description: "start job arguments lack \(key)")
            }
            return object
        }
        func strings(_ value: JSONValue?) -> [String] {
            guard case .array(let items)? = value else { return [] }
            return items.compactMap { if case .string(let text) = $0 { text } else { nil } }
        }
        guard let eventID = EventID(uuidString: try string("eventID")),
            let environment = APNSEnvironment(rawValue: try string("environment")),
            case .integer(let timestamp)? = value["timestamp"]
        else { throw Unreadable(description: "start job arguments are malformed") }
        let audience = value["audience"]
        var partition: AudiencePartition?
        if case .object(let part)? = value["partition"] {
            func bound(_ key: String) throws -> Int64? {
                switch part[key] {
                case nil, .null?: return nil
                case .integer(let rowID)?: return rowID
                default: throw Unreadable(description: "start job arguments have a malformed partition")
                }
            }
            partition = AudiencePartition(afterRowID: try bound("afterRowID"), throughRowID: try bound("throughRowID"))
        } else if value["partition"] != nil {
            throw Unreadable(description: "start job arguments have a malformed partition")
        }
        var uncertainOf: JobID?
        if value["uncertainOf"] != nil {
            guard let id = JobID(uuidString: try string("uncertainOf")) else {
                throw Unreadable(description: "start job arguments have a malformed uncertainOf")
            }
            uncertainOf = id
        }
        self.init(
            eventID: eventID,
            environment: environment,
            attributesType: try string("attributesType"),
            attributes: try object("attributes"),
            contentState: try object("contentState"),
            alert: try object("alert"),
            audience: StartAudience(
                tags: strings(audience?["tags"]),
                userIDs: strings(audience?["userIDs"]),
                tokens: strings(audience?["tokens"])
            ),
            inputPushToken: value["inputPushToken"] == .bool(true),
            apnsChannelID: try? string("apnsChannelID"),
            channelID: (try? string("channelID")).flatMap(ChannelID.init(uuidString:)),
            timestamp: timestamp,
            partition: partition,
            uncertainOf: uncertainOf,
            lateJoin: value["lateJoin"] == .bool(true)
        )
        absentRestart = value["reason"] == .string(PendingStartReason.absent.rawValue)
    }

    /// The audience of the job's start. A run that follows an earlier one of the same job (its
    /// lease was taken before) leaves out the tokens that run gave a final outcome; a first run has
    /// none to leave out, and skipping that check spares the store a lookup per audience row.
    func audienceQuery(appID: AppID, jobID: JobID, afterEarlierRuns: Bool) -> AudienceQuery {
        AudienceQuery(
            appID: appID,
            environment: environment,
            attributesType: attributesType,
            excludingStartsOf: eventID,
            anyTags: audience.tags,
            userIDs: audience.userIDs,
            tokens: audience.tokens,
            excludingFinalOutcomesOf: afterEarlierRuns ? jobID : nil,
            partition: partition,
            uncertainIn: uncertainOf
        )
    }

    /// The start's body, `{"aps":{...}}`, for one way of receiving updates. The alert is the
    /// publisher's object as given.
    func payload(updates: LiveActivityPayload.StartUpdates) -> [UInt8] {
        let start = LiveActivityPayload.start(
            .init(attributesType: attributesType, attributes: attributes, updates: updates),
            contentState: contentState,
            alert: LiveActivityAlert(title: "", body: ""),
            timestamp: Date(timeIntervalSince1970: TimeInterval(timestamp))
        )
        var body = start.jsonObject
        if case .object(var aps)? = body["aps"] {
            aps["alert"] = .object(alert)
            body["aps"] = .object(aps)
        }
        return body.jsonBytes
    }
}
