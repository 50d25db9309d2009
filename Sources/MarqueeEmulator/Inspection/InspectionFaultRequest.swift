import MarqueeCore

/// A fault as the inspection API takes it (`POST /v1/faults`):
///
/// ```json
/// {"action": "respond", "reason": "TooManyRequests", "every": 3, "endpoints": ["devicePush"]}
/// {"action": "respond", "reason": "ServiceUnavailable", "probability": 0.1}
/// {"action": "goAway", "afterStreams": 100, "reason": "Shutdown"}
/// {"action": "reset", "first": 1}
/// {"action": "resetAfterProcessing", "probability": 0.001}
/// {"action": "respond", "reason": "TooManyRequests", "afterFirst": 100}
/// {"action": "delay", "milliseconds": 250, "jitterMilliseconds": 50}
/// ```
public struct InspectionFaultRequest: Sendable, Codable, Hashable {
    public var action: String
    public var reason: String?
    public var afterStreams: Int?
    public var milliseconds: Int?
    public var jitterMilliseconds: Int?
    public var every: Int?
    public var probability: Double?
    public var first: Int?
    public var afterFirst: Int?
    public var endpoints: [APNSEmulatorFault.Endpoint]?
    public var environments: [APNSEnvironment]?

    /// The fault this request describes, or `nil` when it names no known action.
    public var fault: APNSEmulatorFault? {
        let parsedAction: APNSEmulatorFault.Action
        switch action {
        case "respond":
            parsedAction = .respond(APNSErrorReason(reasonString: reason ?? "ServiceUnavailable"))
        case "goAway":
            guard let afterStreams, afterStreams > 0 else { return nil }
            parsedAction = .goAway(
                afterStreams: afterStreams,
                reason: APNSErrorReason(reasonString: reason ?? "Shutdown")
            )
        case "reset":
            parsedAction = .resetConnection
        case "resetAfterProcessing":
            parsedAction = .resetConnectionAfterProcessing
        case "delay":
            parsedAction = .delay(.milliseconds(milliseconds ?? 0), jitter: .milliseconds(jitterMilliseconds ?? 0))
        default:
            return nil
        }
        let rate: APNSEmulatorFault.Rate
        if let every {
            rate = .everyNth(every)
        } else if let probability {
            rate = .probability(probability)
        } else if let first {
            rate = .first(first)
        } else if let afterFirst {
            rate = .afterFirst(afterFirst)
        } else {
            rate = .always
        }
        return APNSEmulatorFault(
            parsedAction,
            rate: rate,
            endpoints: Set(endpoints ?? []),
            environments: Set(environments ?? [])
        )
    }
}
