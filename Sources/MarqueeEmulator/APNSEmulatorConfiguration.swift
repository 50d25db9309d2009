import Foundation
import Logging
import MarqueeCore
import MarqueeKit
import NIOCore

/// Everything an ``APNSEmulator`` can be told before it starts. Every default follows
/// `apns-reference.md`; where the reference marks a behaviour UNCONFIRMED the default is the most
/// likely one and the field says what the alternative is. Where Apple's servers were seen answering
/// otherwise than Apple's documentation says (§6a), the ``profile`` chooses the defaults.
public struct APNSEmulatorConfiguration: Sendable {
    // MARK: Profile

    /// The profile the settings below marked "Profile:" started from (``init(profile:)``). Setting
    /// one of them afterwards changes that behaviour alone; this property still names the profile.
    public private(set) var profile: APNSEmulatorProfile
    /// Profile: the reason a broadcast or channel-management request for a bundle without the
    /// Broadcast capability answers (status 400 either way): `BroadcastFeatureNotEnabled` as
    /// observed, `FeatureNotEnabled` as documented. The observations are of channel creation; that
    /// broadcasts, reads, deletes and lists answer the same is UNCONFIRMED.
    public var featureNotEnabledReason: APNSErrorReason
    /// Profile: the answer to a `DELETE` of a channel that is unknown or already deleted: 404
    /// `BadPath` as observed, 400 `ChannelNotRegistered` as documented (implied). The status is the
    /// reason's.
    public var unknownChannelDeletionReason: APNSErrorReason
    /// Profile: the answer to a broadcast naming a well-formed channel ID that was never created in
    /// this environment: `BadChannelId` as observed, `ChannelNotRegistered` as documented (implied). A
    /// deleted channel, or another bundle's, answers `ChannelNotRegistered` in both; whether APNs
    /// tells a channel of the other environment from one that never existed is UNCONFIRMED (the
    /// emulator's environments share nothing, so it counts as never created).
    public var neverCreatedChannelBroadcastReason: APNSErrorReason

    // MARK: Listeners

    /// The address every listener binds to. Loopback by default.
    public var host: String = "127.0.0.1"
    /// The environments that get listeners. Sandbox and production are separate worlds: a token,
    /// channel or environment-restricted key of one is unknown in the other.
    public var environments: [APNSEnvironment] = [.sandbox, .production]
    /// How the TLS listeners get their certificate; `.disabled` leaves only h2c listeners.
    public var tls: TLSMode = .generated
    /// Whether each environment also gets cleartext HTTP/2 (h2c, prior knowledge) listeners.
    public var h2c: Bool = true
    /// Fixed ports per listener; any listener not named here binds port 0 (the kernel picks).
    public var ports: [APNSEmulatorListener: Int] = [:]
    /// Where to write the CA certificate PEM clients trust (`curl --cacert`). `nil` writes it into a
    /// fresh temporary directory; ``APNSEmulator/caCertificatePath`` tells where.
    public var caCertificatePath: String? = nil
    /// Whether to serve the JSON inspection API (HTTP/1.1) and on which port (0: the kernel picks).
    public var inspection: Bool = true
    public var inspectionPort: Int = 0

    // MARK: HTTP/2

    /// `SETTINGS_MAX_CONCURRENT_STREAMS` once a request with a valid provider token was accepted.
    /// 1000 was the last value seen from APNs.
    public var maxConcurrentStreams: Int = 1000
    /// `SETTINGS_MAX_CONCURRENT_STREAMS` on a new connection, until the first valid token: APNs allows one.
    public var maxConcurrentStreamsBeforeFirstToken: Int = 1
    /// How long a connection may go without a frame (a PING counts) before the emulator closes it
    /// with GOAWAY `IdleTimeout`. APNs' value is unpublished (UNCONFIRMED; Apple asks providers to
    /// keep connections for hours and to PING after an hour of silence); `nil`, the default, keeps
    /// idle connections open.
    public var idleTimeout: Duration? = nil

    // MARK: Provider tokens

    /// A token whose `iat` is older than this answers 403 `ExpiredProviderToken`.
    public var providerTokenMaximumAge: TimeInterval = 3600
    /// A token change on one connection sooner than this after the previous change answers 429
    /// `TooManyProviderTokenUpdates`.
    public var providerTokenMinimumUpdateInterval: TimeInterval = 20 * 60
    /// How far in the future an `iat` may lie (clock skew) before the token is invalid. UNCONFIRMED:
    /// Apple only says `iat` must be within an hour of now; a future `iat` answers `InvalidProviderToken`.
    public var providerTokenFutureTolerance: TimeInterval = 60
    /// Whether a connection is bound to the team of its first valid token (APNs does this; another
    /// team's token then answers `InvalidProviderToken`).
    public var bindsConnectionToTeam: Bool = true
    /// Whether a connection is bound to the key of its first valid token, so that another key of the
    /// same team answers `UnrelatedKeyIdInToken`. UNCONFIRMED for team-scoped keys; off by default.
    public var bindsConnectionToKey: Bool = false

    // MARK: Requests

    /// Profile: whether a broadcast without `apns-expiration` answers `BadExpirationDate` (`true`, as
    /// observed). Apple's table says the header is required while Apple's own curl examples leave it
    /// out; `false`, the documented profile's choice, accepts it and applies the channel's policy
    /// (deliver once on No Message Stored, store 8 h otherwise).
    public var broadcastRequiresExpiration: Bool
    /// Whether a broadcast without `apns-priority` answers `BadPriority` (`true`) or counts as 10
    /// (`false`, the default, as on device pushes). UNCONFIRMED.
    public var broadcastRequiresPriority: Bool = false
    /// Whether a Most-Recent-Message-Stored broadcast whose expiration lies beyond 8 h is rejected
    /// with `BadExpirationDate` (`true`) or silently capped to 8 h (`false`, the default). UNCONFIRMED.
    public var rejectsBroadcastExpirationBeyondStorageLimit: Bool = false
    /// Whether a device push whose body is not JSON answers `BadRequestPayload` (UNCONFIRMED for
    /// `/3/device`; the default accepts it as APNs does not check payload semantics there).
    public var rejectsMalformedDevicePayload: Bool = false
    /// The longest `apns-channel-id` (in characters) before `BadChannelId`. APNs' limit is unpublished.
    public var maximumChannelIDLength: Int = 64
    /// Random bytes in a channel ID the emulator issues, shown in standard base64. Apple publishes no
    /// format (UNCONFIRMED); its servers were seen issuing 16 bytes, 24 characters (§6a).
    public var channelIDByteCount: Int = 16
    /// Channels per app and environment; one more answers `CannotCreateChannelConfig`.
    public var channelsPerApp: Int = APNSPayloadLimit.channelsPerApp
    /// Broadcasts one channel may publish per hour, by storage policy, before APNs answers 429
    /// `TooManyRequests`. Apple gives No-Message-Stored channels the higher budget but publishes no
    /// numbers (UNCONFIRMED): a policy missing here has no limit, and by default none has.
    public var broadcastBudgetPerHour: [MessageStoragePolicy: Int] = [:]
    /// Per-channel throttling of broadcasts, answered with 429 `TooManyRequests`: Apple speaks of
    /// roughly one update per second, with dynamic limits (UNCONFIRMED numbers). `nil`, the default,
    /// throttles nothing.
    public var broadcastThrottle: APNSEmulatorBroadcastThrottle? = nil
    /// Channel-management requests (create, read, delete, list) per app and hour before 429
    /// `TooManyRequests` (UNCONFIRMED; `nil`, the default, sets no limit).
    public var channelManagementBudgetPerHour: Int? = nil
    /// The spelling of the 503 reason (`ServiceUnavailable`; Apple's broadcast table writes
    /// `Service Unavailable`). UNCONFIRMED.
    public var serviceUnavailableReason: String = "ServiceUnavailable"

    // MARK: Devices

    /// Starts a device accepts in ``pushToStartWindow`` before it ignores further starts (the
    /// device-side push-to-start budget; about 10 in a short window, exact value UNCONFIRMED).
    /// `nil` disables the budget.
    public var pushToStartBudget: Int? = 10
    public var pushToStartWindow: TimeInterval = 60 * 60
    /// Priority-10 updates per activity per hour before the device ignores them (ActivityKit's budget;
    /// the number is unpublished). Priority 5 never counts. `nil` disables the budget.
    public var priorityTenBudgetPerHour: Int? = 40
    /// How a push over a device-side budget is answered: APNs does not see device budgets, so by
    /// default it answers 200 and the device drops the push; `.tooManyRequests` answers 429 instead.
    public var budgetExceededResponse: BudgetExceededResponse = .acceptAndDrop
    /// How long APNs keeps a push for an offline device when the push has no `apns-expiration`
    /// (Apple: it is then stored "according to APNs storage policy"; the period is UNCONFIRMED).
    public var offlineStorageDuration: TimeInterval = 30 * 24 * 60 * 60
    /// How long after its activity ended an update token still answers 200 before it answers 410
    /// `Unregistered`. UNCONFIRMED.
    public var updateTokenLifetimeAfterEnd: TimeInterval = 60 * 60
    /// The longest a Live Activity runs before the system ends it.
    public var maximumActivityDuration: TimeInterval = 8 * 60 * 60
    /// How long an ended activity can stay on the Lock Screen.
    public var lockScreenWindow: TimeInterval = 4 * 60 * 60

    // MARK: Apps

    /// The apps the emulator plays, by bundle ID: their devices report to that Marquee as
    /// MarqueeKit in the real app would (``APNSEmulator/connectApp(bundleID:to:)`` adds one later).
    public var apps: [String: EmulatedAppMarquee] = [:]
    /// How the played apps' devices behave: shares drawn per device, delays, the seed.
    public var appShares = EmulatedAppShares()
    /// How the played apps reach Marquee; `nil` uses MarqueeKit's `URLSessionTransport`.
    public var appTransport: (any MarqueeTransport)? = nil

    // MARK: Recording

    /// Pushes kept per token and per channel for inspection; counters are always kept.
    public var historyPerTarget: Int = 50
    /// Rejected requests kept for inspection (the most recent ones).
    public var rejectionHistory: Int = 1000

    // MARK: Runtime

    /// The clock every time rule reads.
    public var clock: any WallClock = SystemWallClock()
    /// The event loops to serve on; `nil` uses `MultiThreadedEventLoopGroup.singleton`.
    public var eventLoopGroup: (any EventLoopGroup)? = nil
    /// Where the emulator tells what it does, at `debug`: listeners, connections, GOAWAYs, faults
    /// and every rejected request with its reason. Provider tokens and keys are never logged, device
    /// tokens only by their last 8 characters. Silent by default, as a library should be.
    public var logger = Logger(label: "marquee.emulator", factory: { _ in SwiftLogNoOpLogHandler() })

    /// Defaults for `profile`: ``APNSEmulatorProfile/observed`` unless asked otherwise.
    public init(profile: APNSEmulatorProfile = .observed) {
        self.profile = profile
        switch profile {
        case .observed:
            featureNotEnabledReason = .broadcastFeatureNotEnabled
            unknownChannelDeletionReason = .badPath
            neverCreatedChannelBroadcastReason = .badChannelId
            broadcastRequiresExpiration = true
        case .documented:
            featureNotEnabledReason = .featureNotEnabled
            unknownChannelDeletionReason = .channelNotRegistered
            neverCreatedChannelBroadcastReason = .channelNotRegistered
            broadcastRequiresExpiration = false
        }
    }

    /// Where the TLS listeners' certificate comes from.
    public enum TLSMode: Sendable {
        /// A CA and a leaf for 127.0.0.1 and localhost, generated at start.
        case generated
        /// A supplied PEM chain (leaf first) and its PEM private key; `caCertificatePEM` is written
        /// to ``APNSEmulatorConfiguration/caCertificatePath`` for clients.
        case supplied(certificateChainPEM: String, privateKeyPEM: String, caCertificatePEM: String)
        /// No TLS listeners.
        case disabled
    }

    /// How a push over a device-side budget is answered.
    public enum BudgetExceededResponse: Sendable, Hashable {
        case acceptAndDrop
        case tooManyRequests
    }
}

/// One listener of the emulator: an environment, an endpoint kind and a transport.
public struct APNSEmulatorListener: Sendable, Hashable, CustomStringConvertible {
    /// What a listener serves, as Apple's host families do.
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        /// `api(.sandbox).push.apple.com`: `/3/device/...` and `/4/broadcasts/apps/...`.
        case push
        /// `api-manage-broadcast(.sandbox).push.apple.com`: `/1/apps/.../channels`, `/all-channels`.
        case channelManagement
    }

    public enum Transport: String, Sendable, Hashable, Codable, CaseIterable {
        /// HTTP/2 over TLS with ALPN `h2`.
        case tls
        /// Cleartext HTTP/2 with prior knowledge.
        case h2c
    }

    public var environment: APNSEnvironment
    public var kind: Kind
    public var transport: Transport

    public init(environment: APNSEnvironment, kind: Kind, transport: Transport) {
        self.environment = environment
        self.kind = kind
        self.transport = transport
    }

    public var description: String { "\(environment)-\(kind.rawValue)-\(transport.rawValue)" }
}
