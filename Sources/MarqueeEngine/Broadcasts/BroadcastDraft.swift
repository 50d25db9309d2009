import Foundation
import MarqueeCore

/// What a producer gives to broadcast an update or the end to an event's channels.
public struct BroadcastDraft: Sendable, Hashable {
    public var event: BroadcastEvent
    /// Passed to the device unchanged.
    public var contentState: JSONObject
    public var alert: LiveActivityAlert?
    public var staleDate: Date?
    /// Only with `end`.
    public var dismissalDate: Date?
    public var relevanceScore: Double?
    /// The priority asked for; `nil` lets the priority policy choose.
    public var priority: APNSPriority?
    /// Marks an update the policy sends at 10 (within the budget).
    public var important: Bool
    /// `nil` for every environment of the event.
    public var environments: [APNSEnvironment]?

    public init(
        event: BroadcastEvent,
        contentState: JSONObject,
        alert: LiveActivityAlert? = nil,
        staleDate: Date? = nil,
        dismissalDate: Date? = nil,
        relevanceScore: Double? = nil,
        priority: APNSPriority? = nil,
        important: Bool = false,
        environments: [APNSEnvironment]? = nil
    ) {
        self.event = event
        self.contentState = contentState
        self.alert = alert
        self.staleDate = staleDate
        self.dismissalDate = dismissalDate
        self.relevanceScore = relevanceScore
        self.priority = priority
        self.important = important
        self.environments = environments
    }

    /// The environments to send to, checked against the event's.
    func validatedEnvironments(of event: Event) throws(EngineError) -> [APNSEnvironment] {
        var validation = InputValidation()
        if event.environments.isEmpty { validation.add(FieldError("/environments", "the event has no environments")) }
        if let environments {
            validation.require(
                !environments.isEmpty,
                "/environments",
                "must name at least one environment, or be left out for all"
            )
            for (index, environment) in environments.enumerated() where !event.environments.contains(environment) {
                validation.add(FieldError("/environments/\(index)", "the event has no channel in \(environment)"))
            }
        }
        try validation.check()
        return Set(environments ?? Array(event.environments)).sorted { $0.rawValue < $1.rawValue }
    }

    func validate() throws(EngineError) {
        var validation = InputValidation()
        validation.require(dismissalDate == nil || event == .end, "/dismissalDate", "is only allowed with event end")
        if let relevanceScore {
            validation.require(relevanceScore.isFinite, "/relevanceScore", "must be a finite number")
        }
        validation.rejectNUL(in: contentState, "/contentState")
        if let alert { validation.rejectNUL(in: alert.jsonObject, "/alert") }
        if let priority {
            validation.require(
                priority == .immediate || !important,
                "/important",
                "true asks for priority 10; leave out priority or send 10"
            )
        }
        try validation.check()
    }

    /// The payload at `timestamp` (Unix seconds).
    func payload(timestamp: Int64) -> LiveActivityPayload {
        let date = Date(timeIntervalSince1970: TimeInterval(timestamp))
        switch event {
        case .update:
            return .update(
                contentState: contentState,
                timestamp: date,
                alert: alert,
                staleDate: staleDate,
                relevanceScore: relevanceScore
            )
        case .end:
            return .end(
                contentState: contentState,
                timestamp: date,
                dismissalDate: dismissalDate,
                alert: alert,
                staleDate: staleDate,
                relevanceScore: relevanceScore
            )
        }
    }
}
