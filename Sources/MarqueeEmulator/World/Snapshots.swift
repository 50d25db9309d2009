import Foundation
import MarqueeCore

/// An iOS version as the emulator compares them (`17.2`, `18.0`). Encoded as its string.
public struct IOSVersion: Sendable, Hashable, Comparable, Codable, CustomStringConvertible, ExpressibleByStringLiteral {
    public var major: Int
    public var minor: Int

    public init(_ major: Int, _ minor: Int = 0) {
        self.major = major
        self.minor = minor
    }

    /// Parses `"18"`, `"18.0"` or `"17.2.1"` (the patch is ignored).
    public init?(string: String) {
        let parts = string.split(separator: ".")
        guard (1...3).contains(parts.count), let major = Int(parts[0]), major >= 0 else { return nil }
        let minor = parts.count > 1 ? Int(parts[1]) : 0
        guard let minor, minor >= 0 else { return nil }
        self.init(major, minor)
    }

    public init(stringLiteral value: String) {
        self = IOSVersion(string: value) ?? IOSVersion(0)
    }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let version = IOSVersion(string: text) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "not an iOS version")
            )
        }
        self = version
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

    public static func < (lhs: IOSVersion, rhs: IOSVersion) -> Bool {
        (lhs.major, lhs.minor) < (rhs.major, rhs.minor)
    }

    public var description: String { "\(major).\(minor)" }

    /// Push-to-start tokens exist from iOS 17.2.
    public static let pushToStart = IOSVersion(17, 2)
    /// Broadcast channels, `input-push-channel` and `input-push-token` exist from iOS 18.
    public static let channels = IOSVersion(18, 0)
}

/// A virtual device as inspection shows it.
public struct EmulatedDevice: Sendable, Hashable, Codable {
    public var id: String
    public var environment: APNSEnvironment
    public var bundleID: String
    public var iOSVersion: IOSVersion
    /// The app's ordinary device token (alerts and background pushes).
    public var deviceToken: String
    /// The push-to-start token per `attributes-type` (one per `ActivityAttributes` type).
    public var pushToStartTokens: [String: String]
    /// `false` once the app was removed: every token of the device then answers 410 `Unregistered`.
    public var isAppInstalled: Bool
    /// `false` while the device is offline: APNs still accepts its pushes, holds the latest one
    /// that asked to be stored, and delivers it when the device is back.
    public var isOnline: Bool
    /// The device's Live Activities, oldest first.
    public var activityIDs: [String]
    /// `false` when the user turned Live Activities off for the app: APNs still accepts a start
    /// (200) and nothing shows, which only the device's own report can tell.
    public var areLiveActivitiesEnabled: Bool
    /// What was drawn for the device when its app is one the emulator plays (``EmulatedAppShares``);
    /// `nil` for other apps' devices.
    public var appTraits: EmulatedAppTraits?

    public init(
        id: String,
        environment: APNSEnvironment,
        bundleID: String,
        iOSVersion: IOSVersion,
        deviceToken: String,
        pushToStartTokens: [String: String],
        isAppInstalled: Bool,
        isOnline: Bool,
        activityIDs: [String],
        areLiveActivitiesEnabled: Bool = true
    ) {
        self.id = id
        self.environment = environment
        self.bundleID = bundleID
        self.iOSVersion = iOSVersion
        self.deviceToken = deviceToken
        self.pushToStartTokens = pushToStartTokens
        self.isAppInstalled = isAppInstalled
        self.isOnline = isOnline
        self.activityIDs = activityIDs
        self.areLiveActivitiesEnabled = areLiveActivitiesEnabled
    }

    private enum CodingKeys: String, CodingKey {
        case id, environment, bundleID, iOSVersion, deviceToken, pushToStartTokens, isAppInstalled, isOnline,
            activityIDs
        case areLiveActivitiesEnabled, appTraits
    }

    /// An inspection answer of an emulator that predates the setting decodes with Live Activities on.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            id: try container.decode(String.self, forKey: .id),
            environment: try container.decode(APNSEnvironment.self, forKey: .environment),
            bundleID: try container.decode(String.self, forKey: .bundleID),
            iOSVersion: try container.decode(IOSVersion.self, forKey: .iOSVersion),
            deviceToken: try container.decode(String.self, forKey: .deviceToken),
            pushToStartTokens: try container.decode([String: String].self, forKey: .pushToStartTokens),
            isAppInstalled: try container.decode(Bool.self, forKey: .isAppInstalled),
            isOnline: try container.decode(Bool.self, forKey: .isOnline),
            activityIDs: try container.decode([String].self, forKey: .activityIDs),
            areLiveActivitiesEnabled: try container.decodeIfPresent(Bool.self, forKey: .areLiveActivitiesEnabled)
                ?? true
        )
        appTraits = try container.decodeIfPresent(EmulatedAppTraits.self, forKey: .appTraits)
    }
}

/// Where a Live Activity is in its life, on the emulator's clock.
public enum ActivityPhase: String, Sendable, Hashable, Codable {
    case active
    /// Past its `stale-date` and not updated since.
    case stale
    /// Ended (by an `end` push or after 8 hours) and still on the Lock Screen.
    case ended
    /// Gone from the Lock Screen (its dismissal date passed, or 4 hours after the end).
    case dismissed
}

/// A Live Activity as the device shows it.
public struct EmulatedActivity: Sendable, Hashable, Codable {
    public var id: String
    public var deviceID: String
    public var environment: APNSEnvironment
    public var bundleID: String
    public var attributesType: String
    public var attributes: JSONValue
    /// The content-state the device currently shows.
    public var contentState: JSONValue?
    public var phase: ActivityPhase
    /// The update token the app reports to its backend, if the activity has one.
    public var updateToken: String?
    /// The broadcast channel the activity is subscribed to, if any.
    public var channelID: String?
    public var startedAt: Date
    public var staleDate: Date?
    public var endedAt: Date?
    public var dismissalDate: Date?
    /// The `timestamp` of the last applied push, in Unix seconds.
    public var lastTimestamp: Int64?
    public var relevanceScore: Double?
    /// The `alert` of the last push that carried one.
    public var lastAlert: JSONValue?
    public var updatesApplied: Int
    public var updatesIgnored: Int
}

/// An update token as the app would report it to its backend (`pushTokenUpdates`).
public struct ReportedUpdateToken: Sendable, Hashable, Codable {
    public var token: String
    public var activityID: String
    public var deviceID: String
    public var environment: APNSEnvironment
    public var bundleID: String
    public var attributesType: String
    public var issuedAt: Date
}

/// A broadcast channel as inspection shows it.
public struct EmulatedChannel: Sendable, Hashable, Codable {
    public var id: String
    public var environment: APNSEnvironment
    public var bundleID: String
    public var messageStoragePolicy: MessageStoragePolicy
    public var createdAt: Date
    public var isDeleted: Bool
    /// Activities subscribed to the channel.
    public var subscriberIDs: [String]
    public var broadcastsReceived: Int
}

/// What a device did with a push APNs accepted.
public enum DeviceOutcome: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Shown: a start created an activity, an update or end changed it, or an ordinary push was displayed.
    case applied
    /// APNs accepted the push, the device ignored it, for the reason given.
    case ignored(String)
    /// The device was offline: APNs holds the push (or, for a broadcast, the channel's stored
    /// message) and delivers it when the device is back, as the text says.
    case stored(String)

    public var description: String {
        switch self {
        case .applied: "applied"
        case .ignored(let reason): "ignored: \(reason)"
        case .stored(let reason): "stored: \(reason)"
        }
    }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        if text == "applied" {
            self = .applied
        } else if text.hasPrefix("stored: ") {
            self = .stored(String(text.dropFirst("stored: ".count)))
        } else {
            self = .ignored(String(text.dropFirst("ignored: ".count)))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

/// A push APNs accepted, as recorded per token and per channel.
public struct ReceivedPush: Sendable, Hashable, Codable {
    public enum Endpoint: String, Sendable, Hashable, Codable {
        case device
        case broadcast
    }

    public var receivedAt: Date
    public var environment: APNSEnvironment
    public var endpoint: Endpoint
    /// The device token or channel ID the push was addressed to.
    public var target: String
    /// `apns-id` for device pushes, `apns-request-id` for broadcasts.
    public var requestID: String
    public var uniqueID: String?
    public var pushType: String?
    public var priority: Int
    public var expiration: Int64?
    public var collapseID: String?
    /// The body as sent, byte for byte.
    public var payloadBytes: [UInt8]
    /// What the device (or, for a broadcast, each subscriber) did with it.
    public var outcomes: [DeviceOutcome]

    /// The body as sent, as text. (Kept as bytes: recording must not cost a string per push.)
    public var payload: String { String(decoding: payloadBytes, as: UTF8.self) }

    private enum CodingKeys: String, CodingKey {
        case receivedAt, environment, endpoint, target, requestID, uniqueID, pushType, priority, expiration, collapseID,
            payload, outcomes
    }

    public init(
        receivedAt: Date,
        environment: APNSEnvironment,
        endpoint: Endpoint,
        target: String,
        requestID: String,
        uniqueID: String?,
        pushType: String?,
        priority: Int,
        expiration: Int64?,
        collapseID: String?,
        payloadBytes: [UInt8],
        outcomes: [DeviceOutcome]
    ) {
        self.receivedAt = receivedAt
        self.environment = environment
        self.endpoint = endpoint
        self.target = target
        self.requestID = requestID
        self.uniqueID = uniqueID
        self.pushType = pushType
        self.priority = priority
        self.expiration = expiration
        self.collapseID = collapseID
        self.payloadBytes = payloadBytes
        self.outcomes = outcomes
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        receivedAt = try container.decode(Date.self, forKey: .receivedAt)
        environment = try container.decode(APNSEnvironment.self, forKey: .environment)
        endpoint = try container.decode(Endpoint.self, forKey: .endpoint)
        target = try container.decode(String.self, forKey: .target)
        requestID = try container.decode(String.self, forKey: .requestID)
        uniqueID = try container.decodeIfPresent(String.self, forKey: .uniqueID)
        pushType = try container.decodeIfPresent(String.self, forKey: .pushType)
        priority = try container.decode(Int.self, forKey: .priority)
        expiration = try container.decodeIfPresent(Int64.self, forKey: .expiration)
        collapseID = try container.decodeIfPresent(String.self, forKey: .collapseID)
        payloadBytes = Array(try container.decode(String.self, forKey: .payload).utf8)
        outcomes = try container.decode([DeviceOutcome].self, forKey: .outcomes)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(receivedAt, forKey: .receivedAt)
        try container.encode(environment, forKey: .environment)
        try container.encode(endpoint, forKey: .endpoint)
        try container.encode(target, forKey: .target)
        try container.encode(requestID, forKey: .requestID)
        try container.encodeIfPresent(uniqueID, forKey: .uniqueID)
        try container.encodeIfPresent(pushType, forKey: .pushType)
        try container.encode(priority, forKey: .priority)
        try container.encodeIfPresent(expiration, forKey: .expiration)
        try container.encodeIfPresent(collapseID, forKey: .collapseID)
        try container.encode(payload, forKey: .payload)
        try container.encode(outcomes, forKey: .outcomes)
    }
}

/// A request the emulator answered with an error, and why.
public struct RejectedRequest: Sendable, Hashable, Codable {
    public var at: Date
    public var environment: APNSEnvironment
    public var listener: APNSEmulatorListener.Kind
    public var method: String
    public var path: String
    public var status: Int
    public var reason: String
    public var requestID: String
}

/// Counters kept for every request, whatever the history limits.
public struct EmulatorCounters: Sendable, Hashable, Codable {
    public var devicePushesAccepted = 0
    /// Devices with at least one start APNs accepted: a fan-out's progress at the devices, each
    /// device once however many starts it got.
    public var devicesStarted = 0
    public var broadcastsAccepted = 0
    public var channelRequestsAccepted = 0
    public var rejected = 0
    public var injectedFaults = 0
    public var rejectedByReason: [String: Int] = [:]

    public init() {}
}
