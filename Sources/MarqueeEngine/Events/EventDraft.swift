import Foundation
import MarqueeCore

/// What a producer gives to create or update an event.
public struct EventDraft: Sendable, Hashable {
    public var title: String
    public var attributesType: String
    public var environments: [APNSEnvironment]
    /// `nil` keeps an existing event's policy, or takes the default for a new one.
    public var storagePolicy: MessageStoragePolicy?
    /// `nil` keeps an existing event's policy, or follows the server's default on a new one.
    public var priorityPolicy: PriorityPolicy?
    public var plannedStart: Date
    public var plannedEnd: Date
    /// `nil` keeps an existing event's timeline, or none for a new one.
    public var timeline: EventTimelineSettings?
    /// `nil` keeps an existing event's choice, or takes late joiners on a new one.
    public var lateJoiners: Bool?

    public init(
        title: String,
        attributesType: String,
        environments: [APNSEnvironment],
        storagePolicy: MessageStoragePolicy?,
        priorityPolicy: PriorityPolicy? = nil,
        plannedStart: Date,
        plannedEnd: Date,
        timeline: EventTimelineSettings? = nil,
        lateJoiners: Bool? = nil
    ) {
        self.title = title
        self.attributesType = attributesType
        self.environments = environments
        self.storagePolicy = storagePolicy
        self.priorityPolicy = priorityPolicy
        self.plannedStart = plannedStart
        self.plannedEnd = plannedEnd
        self.timeline = timeline
        self.lateJoiners = lateJoiners
    }

    /// The storage policy of a new event's channels when the producer names none: APNs keeps the
    /// latest message, so a device that was offline still gets the current score.
    public static let defaultStoragePolicy = MessageStoragePolicy.mostRecentMessageStored

    func validate(key: String, app: App) throws(EngineError) {
        var validation = InputValidation()
        if let error = EventKeyRule.check(key) { validation.add(error) }
        validation.text(title, "/title", maximum: 200)
        validation.require(
            AttributesTypeRule.isValid(attributesType),
            "/attributesType",
            "must be a Swift type name of up to 128 characters (letters, digits, _ and .)"
        )
        validation.require(!environments.isEmpty, "/environments", "must name at least one environment")
        for (index, environment) in environments.enumerated() where !app.environments.contains(environment) {
            validation.add(FieldError("/environments/\(index)", "the app does not use the \(environment) environment"))
        }
        validation.require(plannedEnd > plannedStart, "/plannedEnd", "must be after plannedStart")
        if let timeline {
            Self.validate(timeline, environments: environments, attributesType: attributesType, into: &validation)
        }
        try validation.check()
    }

    /// A timeline's overrides within their ranges, and its start checked as a start is when it is
    /// sent (the audience, the alert, the payload's size), so that a bad start is refused now and
    /// not at the planned start.
    static func validate(
        _ timeline: EventTimelineSettings,
        environments: [APNSEnvironment],
        attributesType: String,
        into validation: inout InputValidation
    ) {
        func range(_ value: Int?, _ pointer: String, _ range: ClosedRange<Int>) {
            guard let value else { return }
            validation.require(
                range.contains(value),
                pointer,
                "must be \(range.lowerBound)–\(range.upperBound) seconds"
            )
        }
        range(timeline.channelLeadSeconds, "/timeline/channelLeadSeconds", TimelinePolicy.channelLeadRange)
        range(timeline.endAfterSeconds, "/timeline/endAfterSeconds", TimelinePolicy.endAfterRange)
        range(
            timeline.deleteChannelsAfterSeconds,
            "/timeline/deleteChannelsAfterSeconds",
            TimelinePolicy.deleteChannelsAfterRange
        )
        guard let start = timeline.start else {
            validation.require(
                !timeline.automatic,
                "/timeline/start",
                "an automatic timeline needs the start to send at plannedStart"
            )
            return
        }
        if let environment = start.environment, !environments.contains(environment) {
            validation.add(
                FieldError("/timeline/start/environment", "the event has no \(environment.rawValue) environment")
            )
        }
        for environment in start.environment.map({ [$0] }) ?? environments {
            let request = StartRequest(timeline: start, environment: environment)
            do throws(EngineError) {
                try StartService.check(request, pointerPrefix: "/timeline/start")
                // The channel does not exist yet: the payload is measured with an ID of APNs' length.
                var arguments = StartService.arguments(
                    eventID: EventID(),
                    attributesType: attributesType,
                    request: request,
                    channel: nil,
                    timestamp: Int64(Date().timeIntervalSince1970)
                )
                arguments.apnsChannelID = String(repeating: "A", count: StartService.apnsChannelIDLength)
                try StartService.checkSize(arguments, pointerPrefix: "/timeline/start")
            } catch {
                if case .invalidInput(let fields) = error {
                    for field in fields where !validation.errors.contains(field) { validation.add(field) }
                }
            }
        }
    }
}

/// The producer's event keys: readable in URLs and logs.
public enum EventKeyRule {
    public static let maximumLength = 200

    /// A field error for the `eventKey` path parameter, or `nil` if the key is valid.
    public static func check(_ key: String) -> FieldError? {
        guard isKeyLike(key) else {
            return FieldError(
                "eventKey",
                "must be 1–\(maximumLength) characters of letters, digits, '.', '_', '-' and ':'"
            )
        }
        return nil
    }

    /// 1–200 letters, digits, `.`, `_`, `-` and `:` (`^[A-Za-z0-9._:-]{1,200}$`): event keys, and
    /// ActivityKit's activity IDs (UUID strings).
    static func isKeyLike(_ key: String) -> Bool {
        let allowed = key.utf8.allSatisfy {
            ($0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z")) || ($0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z"))
                || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9"))
                || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-")
                || $0 == UInt8(ascii: ":")
        }
        return !key.isEmpty && key.utf8.count <= maximumLength && allowed
    }
}

/// ActivityKit attributes types: the Swift type's name the app registered.
public enum AttributesTypeRule {
    public static func isValid(_ name: String) -> Bool {
        guard let first = name.utf8.first, name.utf8.count <= 128 else { return false }
        let isLetter = { (byte: UInt8) in
            (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                || byte == UInt8(ascii: "_")
        }
        return isLetter(first)
            && name.utf8.allSatisfy {
                isLetter($0) || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) || $0 == UInt8(ascii: ".")
            }
    }
}
