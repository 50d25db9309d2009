import Foundation
import MarqueeAPNS
import MarqueeCore

/// What an activity-update job carries: the event and environment, the body to push (the same
/// `aps` the channel got) with its timestamp, and the priority chosen for it. Fixed when the job is
/// created, so that a resumed job sends the same bytes.
struct ActivityUpdateJobArguments: Sendable, Hashable {
    var eventID: EventID
    var environment: APNSEnvironment
    /// `update` or `end`: an accepted end ends the activity's record.
    var event: BroadcastEvent
    /// The body, `{"aps":{...}}`, as built for the broadcast.
    var payload: JSONObject
    /// `aps.timestamp` of `payload`; an activity already sent a push at or after it is left out.
    var timestamp: Int64
    var priority: APNSPriority

    var jsonValue: JSONValue {
        [
            "eventID": .string(eventID.description),
            "environment": .string(environment.rawValue),
            "event": .string(event.rawValue),
            "payload": .object(payload),
            "timestamp": .integer(timestamp),
            "priority": .integer(Int64(priority.rawValue)),
        ]
    }

    init(
        eventID: EventID,
        environment: APNSEnvironment,
        event: BroadcastEvent,
        payload: JSONObject,
        timestamp: Int64,
        priority: APNSPriority
    ) {
        self.eventID = eventID
        self.environment = environment
        self.event = event
        self.payload = payload
        self.timestamp = timestamp
        self.priority = priority
    }

    init(_ value: JSONValue) throws(JobFailure) {
        guard case .string(let event)? = value["eventID"], let eventID = EventID(uuidString: event),
            case .string(let environmentName)? = value["environment"],
            let environment = APNSEnvironment(rawValue: environmentName),
            case .string(let kindName)? = value["event"], let kind = BroadcastEvent(rawValue: kindName),
            case .object(let payload)? = value["payload"],
            case .integer(let timestamp)? = value["timestamp"],
            case .integer(let priorityValue)? = value["priority"],
            let priority = APNSPriority(rawValue: Int(priorityValue))
        else { throw JobFailure(description: "activity update job arguments are malformed") }
        self.init(
            eventID: eventID,
            environment: environment,
            event: kind,
            payload: payload,
            timestamp: timestamp,
            priority: priority
        )
    }
}
