import Foundation

/// A push-to-start token registered by a device for one ActivityKit attributes type. One row per
/// (app, environment, attributes type, token); registering it again refreshes the row.
public struct PushToStartToken: Sendable, Hashable {
    /// The store's row number: stable, increasing, the cursor of audience pages.
    public var rowID: Int64
    public var appID: AppID
    public var environment: APNSEnvironment
    public var attributesType: String
    /// The token as hex, as ActivityKit hands it to the app.
    public var token: String
    public var deviceID: String?
    public var userID: String?
    public var tags: [String]
    /// The device's iOS version (`18.2`), which decides between `input-push-channel` and a plain start.
    public var iosVersion: String?
    /// Whether the user allowed frequent updates (`NSSupportsLiveActivitiesFrequentUpdates`).
    public var frequentPushesEnabled: Bool
    public var firstRegisteredAt: Date
    /// The latest registration; a 410 retires the token only if APNs saw it invalid after this.
    public var lastRegisteredAt: Date
    public var invalidatedAt: Date?
    public var invalidationReason: APNSErrorReason?
    /// The app's APNs device token (hex), which a background push wakes the app through; `nil`
    /// until the app registers one.
    public var deviceToken: String?

    public init(
        rowID: Int64,
        appID: AppID,
        environment: APNSEnvironment,
        attributesType: String,
        token: String,
        deviceID: String?,
        userID: String?,
        tags: [String],
        iosVersion: String?,
        frequentPushesEnabled: Bool,
        firstRegisteredAt: Date,
        lastRegisteredAt: Date,
        invalidatedAt: Date?,
        invalidationReason: APNSErrorReason?,
        deviceToken: String? = nil
    ) {
        self.rowID = rowID
        self.appID = appID
        self.environment = environment
        self.attributesType = attributesType
        self.token = token
        self.deviceID = deviceID
        self.userID = userID
        self.tags = tags
        self.iosVersion = iosVersion
        self.frequentPushesEnabled = frequentPushesEnabled
        self.firstRegisteredAt = firstRegisteredAt
        self.lastRegisteredAt = lastRegisteredAt
        self.invalidatedAt = invalidatedAt
        self.invalidationReason = invalidationReason
        self.deviceToken = deviceToken
    }

    public var isValid: Bool { invalidatedAt == nil }
}

extension PushToStartToken: CustomStringConvertible {
    /// Tokens are logged by their last 8 characters at most.
    public var description: String { "PushToStartToken(#\(rowID), \(PushTokenRedaction.redacted(token)))" }
}

/// One registration as a device sends it; the input of the bulk upsert.
///
/// A registration naming a `deviceID` the app already has a row for (same environment and
/// attributes type) under another token is that device's rotated token: the row moves to the new
/// token and keeps its row ID, so that its start ledger entries, activities and reports follow the
/// device (`TokenStore.upsertPushToStartTokens`).
public struct PushToStartRegistration: Sendable, Hashable {
    public var environment: APNSEnvironment
    public var attributesType: String
    public var token: String
    public var deviceID: String?
    public var userID: String?
    public var tags: [String]
    public var iosVersion: String?
    public var frequentPushesEnabled: Bool
    /// The app's APNs device token (hex); `nil` keeps the one the row has.
    public var deviceToken: String?

    public init(
        environment: APNSEnvironment,
        attributesType: String,
        token: String,
        deviceID: String? = nil,
        userID: String? = nil,
        tags: [String] = [],
        iosVersion: String? = nil,
        frequentPushesEnabled: Bool = false,
        deviceToken: String? = nil
    ) {
        self.environment = environment
        self.attributesType = attributesType
        self.token = token
        self.deviceID = deviceID
        self.userID = userID
        self.tags = tags
        self.iosVersion = iosVersion
        self.frequentPushesEnabled = frequentPushesEnabled
        self.deviceToken = deviceToken
    }
}
