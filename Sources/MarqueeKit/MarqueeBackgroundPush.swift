import Foundation

/// Marquee's background push to the app's device token (`apns-push-type: background`,
/// `content-available: 1`, priority 5): it wakes the app to say what ActivityKit shows for
/// some events. Its body carries, beside `aps`, a `marquee` object:
///
/// ```json
/// {"aps": {"content-available": 1},
///  "marquee": {"ask": "presence", "events": [{"eventKey": "ars-che-2026-11-28", "environment": "production"}]}}
/// ```
///
/// The server sends exactly what this parser reads.
public struct MarqueeBackgroundPush: Sendable, Equatable {
    /// What Marquee asks for.
    public var ask: Ask
    /// The events it asks about, in the order sent, without repeats.
    public var events: [EventReference]

    public enum Ask: String, Sendable, Equatable {
        /// Report presence (`PUT /v1/events/{eventKey}/presence/{token}`) for each event.
        case presence
    }

    public struct EventReference: Sendable, Equatable, Hashable {
        public var eventKey: String
        public var environment: MarqueeKitEnvironment

        public init(eventKey: String, environment: MarqueeKitEnvironment) {
            self.eventKey = eventKey
            self.environment = environment
        }
    }

    /// The key beside `aps` that makes a push Marquee's.
    public static let payloadKey = "marquee"
    /// The most events one push may ask about: a push body holds 4 KB, this bounds the work it asks.
    public static let maxEvents = 64

    public init(ask: Ask, events: [EventReference]) {
        self.ask = ask
        self.events = events
    }

    /// Reads a push as `application(_:didReceiveRemoteNotification:)` hands it over.
    ///
    /// - Throws: `.notMarquee` when the push has no `marquee` object (someone else's push: the
    ///   app handles it itself); any other case when it has one that is not what Marquee sends.
    public init(userInfo: [AnyHashable: Any]) throws(MarqueeBackgroundPushError) {
        guard let object = userInfo[Self.payloadKey] else { throw .notMarquee }
        try self.init(marqueeObject: object)
    }

    /// Reads a push's whole JSON body, as APNs delivers it.
    public init(json: Data) throws(MarqueeBackgroundPushError) {
        let parsed: Any
        do { parsed = try JSONSerialization.jsonObject(with: json) } catch {
            throw .malformed("the push body is not JSON")
        }
        guard let body = parsed as? [String: Any] else { throw .malformed("the push body is not a JSON object") }
        guard let object = body[Self.payloadKey] else { throw .notMarquee }
        try self.init(marqueeObject: object)
    }

    private init(marqueeObject object: Any) throws(MarqueeBackgroundPushError) {
        guard let marquee = object as? [String: Any] else { throw .malformed("`marquee` is not an object") }
        guard let askName = marquee["ask"] as? String else {
            throw .malformed("`marquee.ask` is missing or not a string")
        }
        guard let ask = Ask(rawValue: askName) else { throw .unsupportedAsk(askName) }
        guard let list = marquee["events"] as? [Any] else {
            throw .malformed("`marquee.events` is missing or not an array")
        }
        guard !list.isEmpty else { throw .malformed("`marquee.events` is empty") }
        guard list.count <= Self.maxEvents else {
            throw .malformed("`marquee.events` has \(list.count) events, more than \(Self.maxEvents)")
        }
        var events: [EventReference] = []
        for (index, item) in list.enumerated() {
            guard let entry = item as? [String: Any] else {
                throw .malformed("`marquee.events[\(index)]` is not an object")
            }
            guard let eventKey = entry["eventKey"] as? String, MarqueeRequests.isKey(eventKey) else {
                throw .malformed(
                    """
                    `marquee.events[\(index)].eventKey` is not an event key (1–200 letters, digits, '.', '_', ':',\
                     '-')
                    """
                )
            }
            guard let environmentName = entry["environment"] as? String,
                let environment = MarqueeKitEnvironment(rawValue: environmentName)
            else {
                throw .malformed("`marquee.events[\(index)].environment` is not `sandbox` or `production`")
            }
            let reference = EventReference(eventKey: eventKey, environment: environment)
            if !events.contains(reference) { events.append(reference) }
        }
        self.init(ask: ask, events: events)
    }
}
