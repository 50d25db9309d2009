import Foundation
import MarqueeCore

/// What a confirmation job carries in its `arguments`: the start job whose uncertain starts it
/// confirms, and that job's event and environment.
struct ConfirmationJobArguments: Sendable, Hashable {
    var startJobID: JobID
    var eventID: EventID
    var environment: APNSEnvironment

    var jsonValue: JSONValue {
        [
            "startJobID": .string(startJobID.description),
            "eventID": .string(eventID.description),
            "environment": .string(environment.rawValue),
        ]
    }

    init(startJobID: JobID, eventID: EventID, environment: APNSEnvironment) {
        self.startJobID = startJobID
        self.eventID = eventID
        self.environment = environment
    }

    init(_ value: JSONValue) throws {
        guard case .string(let job)? = value["startJobID"], let startJobID = JobID(uuidString: job),
            case .string(let event)? = value["eventID"], let eventID = EventID(uuidString: event),
            case .string(let environment)? = value["environment"],
            let environment = APNSEnvironment(rawValue: environment)
        else { throw StartJobArguments.Unreadable(description: "confirmation job arguments are malformed") }
        self.init(startJobID: startJobID, eventID: eventID, environment: environment)
    }
}
