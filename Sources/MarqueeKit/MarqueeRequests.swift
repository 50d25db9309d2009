import Foundation

/// Every request MarqueeKit sends, built in this one file: the API's paths, methods and JSON
/// bodies as `openapi.yaml` describes them (`registerPushToStartToken`, `putActivityUpdateToken`,
/// the presence report), so that a change of the API is a change here and in its tests only.
public struct MarqueeRequests: Sendable {
    public var baseURL: URL
    public var appKey: String
    public var environment: MarqueeKitEnvironment

    public init(baseURL: URL, appKey: String, environment: MarqueeKitEnvironment) {
        self.baseURL = baseURL
        self.appKey = appKey
        self.environment = environment
    }

    // MARK: Bodies (the API's schemas)

    /// `PushToStartTokenRegistration`.
    public struct PushToStartTokenRegistration: Sendable, Equatable, Codable {
        public var environment: MarqueeKitEnvironment
        public var attributesType: String
        public var deviceID: String?
        /// The app's APNs device token (hex): where Marquee's background push asks the app to report.
        public var deviceToken: String?
        public var iosVersion: String?
        public var frequentPushesEnabled: Bool?
        public var tags: [String]?
        public var userID: String?
    }

    /// `ActivityUpdateTokenRegistration`.
    public struct ActivityUpdateTokenRegistration: Sendable, Equatable, Codable {
        public var eventKey: String
        public var environment: MarqueeKitEnvironment
        public var token: String
        /// The push-to-start token the activity's start went to, when Marquee started it.
        public var pushToStartToken: String?
        public var frequentPushesEnabled: Bool?
    }

    /// The presence report's body.
    public struct PresenceReportBody: Sendable, Equatable, Codable {
        public var environment: MarqueeKitEnvironment
        public var state: PresenceReport.State
        public var activityID: String?
    }

    // MARK: Requests

    /// `PUT /v1/push-to-start-tokens/{token}`: registers or refreshes the push-to-start token,
    /// with the device token beside it when the app has one.
    public func registerPushToStartToken(
        _ token: String,
        configuration: MarqueeKitConfiguration,
        deviceToken: String?
    ) throws(MarqueeKitError) -> MarqueeHTTPRequest {
        try Self.checkHex(token, "push-to-start token")
        if let deviceToken { try Self.checkHex(deviceToken, "device token") }
        let body = PushToStartTokenRegistration(
            environment: environment,
            attributesType: configuration.attributesType,
            deviceID: configuration.deviceID,
            deviceToken: deviceToken,
            iosVersion: configuration.iosVersion,
            frequentPushesEnabled: configuration.frequentPushesEnabled,
            tags: configuration.tags,
            userID: configuration.userID
        )
        return try request("PUT", ["v1", "push-to-start-tokens", token], body: body)
    }

    /// `PUT /v1/activities/{activityID}/update-token`: a push-started (or app-started) activity's
    /// update token; the first one tells Marquee the activity is showing.
    public func registerUpdateToken(
        _ token: String,
        activityID: String,
        eventKey: String,
        pushToStartToken: String?,
        frequentPushesEnabled: Bool?
    ) throws(MarqueeKitError) -> MarqueeHTTPRequest {
        try Self.checkHex(token, "update token")
        try Self.checkKey(activityID, "activity ID")
        try Self.checkKey(eventKey, "event key")
        if let pushToStartToken { try Self.checkHex(pushToStartToken, "push-to-start token") }
        let body = ActivityUpdateTokenRegistration(
            eventKey: eventKey,
            environment: environment,
            token: token,
            pushToStartToken: pushToStartToken,
            frequentPushesEnabled: frequentPushesEnabled
        )
        return try request("PUT", ["v1", "activities", activityID, "update-token"], body: body)
    }

    /// `PUT /v1/events/{eventKey}/presence/{pushToStartToken}`: what ActivityKit shows for the
    /// event on the device whose push-to-start token this is.
    public func reportPresence(
        _ report: PresenceReport,
        pushToStartToken: String
    ) throws(MarqueeKitError) -> MarqueeHTTPRequest {
        try Self.checkKey(report.eventKey, "event key")
        try Self.checkHex(pushToStartToken, "push-to-start token")
        if let activityID = report.activityID { try Self.checkKey(activityID, "activity ID") }
        let body = PresenceReportBody(environment: environment, state: report.state, activityID: report.activityID)
        return try request("PUT", ["v1", "events", report.eventKey, "presence", pushToStartToken], body: body)
    }

    // MARK: Building

    /// Sorted keys: the same registration is the same bytes, which `TokenLedger` compares.
    private static func encode(_ body: some Encodable) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(body)
    }

    private func request(
        _ method: String,
        _ segments: [String],
        body: some Encodable
    ) throws(MarqueeKitError) -> MarqueeHTTPRequest {
        // Every segment here is hex or matches the API's key pattern (letters, digits, `.`, `_`,
        // `:`, `-`), all of which a path segment takes as they are; encoding stays for safety.
        let path =
            "/"
            + segments.map { $0.addingPercentEncoding(withAllowedCharacters: Self.segmentCharacters) ?? $0 }.joined(
                separator: "/"
            )
        var base = baseURL.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        guard let url = URL(string: base + path) else {
            throw .invalidArgument("no URL can be made of \(base) and \(path)")
        }
        let data: Data
        do { data = try Self.encode(body) } catch {
            throw .invalidArgument("the request body could not be encoded: \(error)")
        }
        return MarqueeHTTPRequest(
            method: method,
            path: path,
            url: url,
            headers: [
                "Authorization": "Bearer \(appKey)",
                "Content-Type": "application/json",
                "Accept": "application/json, application/problem+json",
                "User-Agent": "MarqueeKit/1",
            ],
            body: data
        )
    }

    private static let segmentCharacters = CharacterSet(
        charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~:"
    )

    /// An APNs token as hex: an even number of hex digits, at most 400 (the API's `Token`).
    private static func checkHex(_ value: String, _ what: String) throws(MarqueeKitError) {
        let isHex = value.utf8.allSatisfy {
            (48...57).contains($0) || (97...102).contains($0) || (65...70).contains($0)
        }
        guard isHex, !value.isEmpty, value.utf8.count.isMultiple(of: 2), value.utf8.count <= 400 else {
            throw .invalidArgument("the \(what) must be hex (an even number of hex digits, at most 400)")
        }
    }

    /// An event key or activity ID: 1–200 letters, digits, `.`, `_`, `:` and `-` (the API's pattern).
    static func checkKey(_ value: String, _ what: String) throws(MarqueeKitError) {
        guard isKey(value) else {
            throw .invalidArgument("the \(what) must be 1–200 letters, digits, '.', '_', ':' and '-'")
        }
    }

    static func isKey(_ value: String) -> Bool {
        !value.isEmpty && value.utf8.count <= 200
            && value.utf8.allSatisfy { byte in
                (48...57).contains(byte) || (65...90).contains(byte) || (97...122).contains(byte) || byte == 46
                    || byte == 95 || byte == 58 || byte == 45
            }
    }
}
