import Foundation

/// What an app tells MarqueeKit once: where Marquee is, its app key, and what its tokens are for.
public struct MarqueeKitConfiguration: Sendable, Equatable {
    /// Marquee's base URL (`https://marquee.example.com`, or with a path prefix behind a proxy).
    public var baseURL: URL
    /// The app's API key (role `app`): it may register tokens and report presence, nothing else.
    /// It ships inside the app, so it is no secret from the device's owner; it is never logged.
    public var appKey: String
    /// The environment of this build's tokens.
    public var environment: MarqueeKitEnvironment
    /// The ActivityKit attributes type's Swift name, as the producer's events name it
    /// (`MatchAttributes`).
    public var attributesType: String
    /// A stable ID for this installation (`identifierForVendor`): a rotated push-to-start token
    /// is then the same device to Marquee.
    public var deviceID: String?
    /// The app's user, when the producer targets users.
    public var userID: String?
    /// Tags the producer's audiences select (a followed team).
    public var tags: [String]?
    /// `major.minor[.patch]`; on iOS, the running system's version unless given.
    public var iosVersion: String?
    /// `ActivityAuthorizationInfo.frequentPushesEnabled` as the app sees it.
    public var frequentPushesEnabled: Bool?
    /// How long one request may take: a background push leaves the app about 30 seconds.
    public var requestTimeout: Duration
    /// When a request that failed is tried again.
    public var retryPolicy: RetryPolicy

    public init(
        baseURL: URL,
        appKey: String,
        environment: MarqueeKitEnvironment,
        attributesType: String,
        deviceID: String? = nil,
        userID: String? = nil,
        tags: [String]? = nil,
        iosVersion: String? = MarqueeKitConfiguration.runningIOSVersion,
        frequentPushesEnabled: Bool? = nil,
        requestTimeout: Duration = .seconds(15),
        retryPolicy: RetryPolicy = RetryPolicy()
    ) {
        self.baseURL = baseURL
        self.appKey = appKey
        self.environment = environment
        self.attributesType = attributesType
        self.deviceID = deviceID
        self.userID = userID
        self.tags = tags
        self.iosVersion = iosVersion
        self.frequentPushesEnabled = frequentPushesEnabled
        self.requestTimeout = requestTimeout
        self.retryPolicy = retryPolicy
    }

    /// The running iOS version as Marquee's `iosVersion` field takes it; nil elsewhere (a Linux or
    /// macOS version says nothing about the device's ActivityKit).
    public static var runningIOSVersion: String? {
        #if os(iOS)
        let version = ProcessInfo.processInfo.operatingSystemVersion
        return version.patchVersion == 0
            ? "\(version.majorVersion).\(version.minorVersion)"
            : "\(version.majorVersion).\(version.minorVersion).\(version.patchVersion)"
        #else
        return nil
        #endif
    }
}
