/// Every `reason` string APNs documents for device pushes, broadcasts and channel management, the
/// ones its servers were seen sending instead (`apns-reference.md` §6a), and `unknown` keeping any
/// other string intact so that a reason Apple adds later still reaches logs and callers verbatim.
public enum APNSErrorReason: Sendable, Hashable, CustomStringConvertible {
    // 400
    case badCollapseId
    case badDeviceToken
    case badExpirationDate
    case badMessageId
    case badPriority
    case badTopic
    case deviceTokenNotForTopic
    case duplicateHeaders
    case idleTimeout
    case invalidPushType
    case missingDeviceToken
    case missingTopic
    case payloadEmpty
    case topicDisallowed
    case featureNotEnabled
    case missingChannelId
    case badChannelId
    case channelNotRegistered
    case badRequestParams
    case badRequestPayload
    case missingPushType
    case cannotCreateChannelConfig
    /// What APNs really answers, instead of the documented `featureNotEnabled`, for a bundle whose
    /// App ID lacks the Broadcast capability (observed, §6a). Not in Apple's tables.
    case broadcastFeatureNotEnabled
    // 403
    case badCertificate
    case badCertificateEnvironment
    case expiredProviderToken
    case forbidden
    case invalidProviderToken
    case missingProviderToken
    case unrelatedKeyIdInToken
    case badEnvironmentKeyIdInToken
    case topicMismatch
    // 404
    case badPath
    // 405
    case methodNotAllowed
    // 410
    case expiredToken
    case unregistered
    // 413
    case payloadTooLarge
    // 429
    case tooManyProviderTokenUpdates
    case tooManyRequests
    // 500
    case internalServerError
    // 503
    case serviceUnavailable
    case shutdown
    /// A reason string this build does not know, kept as APNs sent it.
    case unknown(String)

    private static let knownReasons: [(APNSErrorReason, String, Int)] = [
        (.badCollapseId, "BadCollapseId", 400),
        (.badDeviceToken, "BadDeviceToken", 400),
        (.badExpirationDate, "BadExpirationDate", 400),
        (.badMessageId, "BadMessageId", 400),
        (.badPriority, "BadPriority", 400),
        (.badTopic, "BadTopic", 400),
        (.deviceTokenNotForTopic, "DeviceTokenNotForTopic", 400),
        (.duplicateHeaders, "DuplicateHeaders", 400),
        (.idleTimeout, "IdleTimeout", 400),
        (.invalidPushType, "InvalidPushType", 400),
        (.missingDeviceToken, "MissingDeviceToken", 400),
        (.missingTopic, "MissingTopic", 400),
        (.payloadEmpty, "PayloadEmpty", 400),
        (.topicDisallowed, "TopicDisallowed", 400),
        (.featureNotEnabled, "FeatureNotEnabled", 400),
        (.missingChannelId, "MissingChannelId", 400),
        (.badChannelId, "BadChannelId", 400),
        (.channelNotRegistered, "ChannelNotRegistered", 400),
        (.badRequestParams, "BadRequestParams", 400),
        (.badRequestPayload, "BadRequestPayload", 400),
        (.missingPushType, "MissingPushType", 400),
        (.cannotCreateChannelConfig, "CannotCreateChannelConfig", 400),
        (.badCertificate, "BadCertificate", 403),
        (.badCertificateEnvironment, "BadCertificateEnvironment", 403),
        (.expiredProviderToken, "ExpiredProviderToken", 403),
        (.forbidden, "Forbidden", 403),
        (.invalidProviderToken, "InvalidProviderToken", 403),
        (.missingProviderToken, "MissingProviderToken", 403),
        (.unrelatedKeyIdInToken, "UnrelatedKeyIdInToken", 403),
        (.badEnvironmentKeyIdInToken, "BadEnvironmentKeyIdInToken", 403),
        (.topicMismatch, "TopicMismatch", 403),
        (.badPath, "BadPath", 404),
        (.methodNotAllowed, "MethodNotAllowed", 405),
        (.expiredToken, "ExpiredToken", 410),
        (.unregistered, "Unregistered", 410),
        (.payloadTooLarge, "PayloadTooLarge", 413),
        (.tooManyProviderTokenUpdates, "TooManyProviderTokenUpdates", 429),
        (.tooManyRequests, "TooManyRequests", 429),
        (.internalServerError, "InternalServerError", 500),
        (.serviceUnavailable, "ServiceUnavailable", 503),
        (.shutdown, "Shutdown", 503),
        // Observed from Apple's servers, not in Apple's tables (§6a).
        (.broadcastFeatureNotEnabled, "BroadcastFeatureNotEnabled", 400),
    ]

    private static let byString: [String: APNSErrorReason] = {
        var table = Dictionary(uniqueKeysWithValues: knownReasons.map { ($0.1, $0.0) })
        // Apple's broadcast error table spells it with a space; APNSwift knows a shorter
        // spelling of the key-environment reason. Both map to the documented case.
        table["Service Unavailable"] = .serviceUnavailable
        table["BadEnvironmentKeyInToken"] = .badEnvironmentKeyIdInToken
        return table
    }()

    /// Every reason this build knows: the documented ones in the order of Apple's tables, then the
    /// ones only observed from Apple's servers.
    public static var allKnown: [APNSErrorReason] { knownReasons.map(\.0) }

    /// Maps a `reason` string from an APNs response body.
    public init(reasonString: String) {
        self = Self.byString[reasonString] ?? .unknown(reasonString)
    }

    private static let stringAndStatus: [APNSErrorReason: (string: String, status: Int)] =
        Dictionary(uniqueKeysWithValues: knownReasons.map { ($0.0, (string: $0.1, status: $0.2)) })

    /// The string APNs puts in the `reason` field.
    public var reasonString: String {
        if case .unknown(let string) = self { return string }
        return Self.stringAndStatus[self]?.string ?? ""
    }

    /// The HTTP status APNs answers with for this reason; `nil` for `unknown`.
    public var status: Int? {
        Self.stringAndStatus[self]?.status
    }

    public var description: String { reasonString }
}

extension APNSErrorReason: Codable {
    public init(from decoder: any Decoder) throws {
        self.init(reasonString: try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(reasonString)
    }
}
