import Foundation
import MarqueeCore

/// What a schedule a producer made does, as kept in `Schedule.request`: the start or the broadcast
/// exactly as it was accepted, performed through `StartService` or `BroadcastService` when due.
/// Timeline steps keep nothing here: they read the event's timeline when they run.
public enum ScheduledAction: Sendable, Hashable {
    case start(StartRequest)
    case broadcast(BroadcastDraft)

    public var kind: ScheduleKind {
        switch self {
        case .start: .start
        case .broadcast(let draft): draft.event == .end ? .end : .broadcast
        }
    }

    /// A stored action that this version cannot read.
    struct Unreadable: Error, CustomStringConvertible {
        var description: String
    }

    /// The action as stored.
    public var jsonValue: JSONValue {
        var object = JSONObject()
        switch self {
        case .start(let request):
            object["environment"] = .string(request.environment.rawValue)
            object["attributes"] = .object(request.attributes)
            object["contentState"] = .object(request.contentState)
            object["alert"] = .object(request.alert)
            object["audience"] = [
                "tags": .array(request.audience.tags.map(JSONValue.string)),
                "userIDs": .array(request.audience.userIDs.map(JSONValue.string)),
                "tokens": .array(request.audience.tokens.map(JSONValue.string)),
            ]
            object["inputPushToken"] = .bool(request.inputPushToken)
            // Only what the producer chose: schedules stored before late joiners read the same.
            var lateJoiners = JSONObject()
            if let enabled = request.lateJoiners.enabled { lateJoiners["enabled"] = .bool(enabled) }
            if let alert = request.lateJoiners.alert { lateJoiners["alert"] = .object(alert) }
            if !lateJoiners.isEmpty { object["lateJoiners"] = .object(lateJoiners) }
        case .broadcast(let draft):
            object["event"] = .string(draft.event.rawValue)
            object["contentState"] = .object(draft.contentState)
            if let alert = draft.alert { object["alert"] = .object(alert.jsonObject) }
            // Seconds since 1970 with their fraction: the stored draft is the accepted one exactly.
            if let staleDate = draft.staleDate { object["staleDate"] = .number(staleDate.timeIntervalSince1970) }
            if let dismissalDate = draft.dismissalDate {
                object["dismissalDate"] = .number(dismissalDate.timeIntervalSince1970)
            }
            if let relevanceScore = draft.relevanceScore { object["relevanceScore"] = .number(relevanceScore) }
            if let priority = draft.priority { object["priority"] = .integer(Int64(priority.rawValue)) }
            object["important"] = .bool(draft.important)
            if let environments = draft.environments {
                object["environments"] = .array(environments.map { .string($0.rawValue) })
            }
        }
        return .object(object)
    }

    /// A stored action; throws for one this version cannot read.
    public init(kind: ScheduleKind, json value: JSONValue) throws {
        func object(_ key: String) throws -> JSONObject {
            guard case .object(let object)? = value[key] else {
                throw Unreadable(description: "the stored \(kind) lacks \(key)")
            }
            return object
        }
        func strings(_ value: JSONValue?) -> [String] {
            guard case .array(let items)? = value else { return [] }
            return items.compactMap { if case .string(let text) = $0 { text } else { nil } }
        }
        func number(_ key: String) -> Double? {
            switch value[key] {
            case .integer(let integer)?: Double(integer)
            case .number(let number)?: number
            default: nil
            }
        }
        switch kind {
        case .start:
            guard case .string(let name)? = value["environment"], let environment = APNSEnvironment(rawValue: name)
            else {
                throw Unreadable(description: "the stored start lacks its environment")
            }
            let audience = value["audience"]
            self = .start(
                StartRequest(
                    environment: environment,
                    attributes: try object("attributes"),
                    contentState: try object("contentState"),
                    alert: try object("alert"),
                    audience: StartAudience(
                        tags: strings(audience?["tags"]),
                        userIDs: strings(audience?["userIDs"]),
                        tokens: strings(audience?["tokens"])
                    ),
                    inputPushToken: value["inputPushToken"] == .bool(true),
                    lateJoiners: LateJoinChoice(stored: value["lateJoiners"])
                )
            )
        case .broadcast, .end:
            guard case .string(let name)? = value["event"], let event = BroadcastEvent(rawValue: name) else {
                throw Unreadable(description: "the stored broadcast lacks its event")
            }
            var alert: LiveActivityAlert?
            if case .object(let stored)? = value["alert"] {
                guard let parsed = LiveActivityAlert(stored: stored) else {
                    throw Unreadable(description: "the stored alert is malformed")
                }
                alert = parsed
            }
            var priority: APNSPriority?
            if case .integer(let raw)? = value["priority"] { priority = APNSPriority(rawValue: Int(raw)) }
            var environments: [APNSEnvironment]?
            if value["environments"] != nil {
                environments = strings(value["environments"]).compactMap(APNSEnvironment.init(rawValue:))
            }
            self = .broadcast(
                BroadcastDraft(
                    event: event,
                    contentState: try object("contentState"),
                    alert: alert,
                    staleDate: number("staleDate").map(Date.init(timeIntervalSince1970:)),
                    dismissalDate: number("dismissalDate").map(Date.init(timeIntervalSince1970:)),
                    relevanceScore: number("relevanceScore"),
                    priority: priority,
                    important: value["important"] == .bool(true),
                    environments: environments
                )
            )
        case .channels, .close:
            throw Unreadable(description: "a \(kind) schedule has no stored action")
        }
    }
}

extension LiveActivityAlert {
    /// An alert as `jsonObject` wrote it.
    init?(stored object: JSONObject) {
        func text(_ value: JSONValue?) -> LiveActivityAlertText? {
            switch value {
            case .string(let text)?: return .plain(text)
            case .object(let localized)?:
                guard case .string(let key)? = localized["loc-key"] else { return nil }
                var arguments: [String] = []
                if case .array(let values)? = localized["loc-args"] {
                    arguments = values.compactMap { if case .string(let text) = $0 { text } else { nil } }
                }
                return .localized(key: key, arguments: arguments)
            default: return nil
            }
        }
        guard let title = text(object["title"]), let body = text(object["body"]) else { return nil }
        var sound: String?
        if case .string(let name)? = object["sound"] { sound = name }
        self.init(title: title, body: body, sound: sound)
    }
}

extension LateJoinChoice {
    /// A choice as `ScheduledAction.jsonValue` wrote it; the default when absent.
    init(stored value: JSONValue?) {
        var enabled: Bool?
        if case .bool(let flag)? = value?["enabled"] { enabled = flag }
        var alert: JSONObject?
        if case .object(let object)? = value?["alert"] { alert = object }
        self.init(enabled: enabled, alert: alert)
    }
}
