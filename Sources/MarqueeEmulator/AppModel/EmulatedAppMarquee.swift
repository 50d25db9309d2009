import Foundation
import MarqueeCore

/// Where an app's Marquee is, for the emulator's app model: the virtual devices of the app report
/// there as MarqueeKit in the real app would. The app key is a secret: it is never logged, never
/// shown by inspection and never part of `description`.
public struct EmulatedAppMarquee: Sendable, Hashable, CustomStringConvertible {
    /// Marquee's base URL (`http://127.0.0.1:8080`).
    public var baseURL: URL
    /// An app-role API key.
    public var appKey: String
    /// The push-to-start token the reports name is the one of this `attributes-type`; `nil` takes
    /// the device's only (or, with several, the first by name).
    public var attributesType: String?
    /// The member of a start's `attributes` that holds the event key (what an app's
    /// `MarqueeActivityAttributes.marqueeEventKey` reads).
    public var eventKeyAttribute: String

    public init(baseURL: URL, appKey: String, attributesType: String? = nil, eventKeyAttribute: String = "eventKey") {
        self.baseURL = baseURL
        self.appKey = appKey
        self.attributesType = attributesType
        self.eventKeyAttribute = eventKeyAttribute
    }

    public var description: String {
        """
        Marquee at \(baseURL.absoluteString) (attributes-type \(attributesType ?? "any"), event key in \
        \"\(eventKeyAttribute)\")
        """
    }

    /// What inspection shows: everything but the key.
    struct Shown: Sendable, Codable {
        var bundleID: String
        var baseURL: String
        var attributesType: String?
        var eventKeyAttribute: String
    }

    func shown(bundleID: String) -> Shown {
        Shown(
            bundleID: bundleID,
            baseURL: baseURL.absoluteString,
            attributesType: attributesType,
            eventKeyAttribute: eventKeyAttribute
        )
    }
}
