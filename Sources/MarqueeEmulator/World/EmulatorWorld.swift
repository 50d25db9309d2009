import Foundation
import MarqueeCore

/// What a push token stands for, in one environment.
enum TokenTarget: Sendable, Hashable {
    /// The app's ordinary device token.
    case device(deviceID: String)
    /// A push-to-start token for one `attributes-type`.
    case pushToStart(deviceID: String, attributesType: String)
    /// An activity's update token.
    case update(deviceID: String, activityID: String)

    var deviceID: String {
        switch self {
        case .device(let id), .pushToStart(let id, _), .update(let id, _): id
        }
    }
}

/// An app (bundle ID) registered under a team.
struct AppRegistration: Sendable {
    let teamID: String
    var broadcastEnabled: Bool
}

struct DeviceState: Sendable {
    var device: EmulatedDevice
    /// Starts accepted, for the device-side push-to-start budget.
    var starts = SlidingWindowBudget()
    /// Start pushes APNs accepted for the device's push-to-start tokens, ever (whatever the device
    /// then did with them): what a fan-out is counted by afterwards.
    var startsAccepted = 0
    /// The push APNs holds while the device is offline: one per device (the emulator's devices
    /// each run one app), a newer one replacing it.
    var heldPush: HeldPush?
}

struct ActivityState: Sendable {
    var activity: EmulatedActivity
    /// Priority-10 pushes applied, for the hourly budget.
    var priorityTenUpdates = SlidingWindowBudget()
    /// A broadcast on its channel arrived while the device was offline: the channel's stored
    /// message is delivered when the device is back.
    var missedChannelMessage = false
}

struct ChannelState: Sendable {
    var channel: EmulatedChannel
    /// The most recent message of a Most-Recent-Message-Stored channel, until it expires.
    var storedMessage: HeldPush?
    /// Broadcasts accepted, for APNs' publishing budget.
    var broadcasts = SlidingWindowBudget()
    /// Broadcasts accepted, for the per-second throttle.
    var pacing = PacingThrottle()
}

/// A push APNs keeps for later delivery, until `expiresAt`.
struct HeldPush: Sendable {
    /// What the push was sent to (absent for a channel's stored message, which goes to every
    /// subscriber that missed it).
    var target: TokenTarget?
    var payload: PushPayload?
    var priority: APNSPriority
    var expiresAt: Date
    /// The token or channel ID and request ID the push is recorded under, so that its history entry
    /// can tell what became of it.
    var historyKey: String
    var requestID: String
}

/// One environment's world: its devices, tokens, activities and channels. Nothing here is visible
/// from the other environment.
struct EnvironmentWorld: Sendable {
    var devices: [String: DeviceState] = [:]
    var activities: [String: ActivityState] = [:]
    var tokens: [String: TokenTarget] = [:]
    /// Tokens that were valid and no longer are, with the time APNs last knew them valid (ms).
    var retiredTokens: [String: Int64] = [:]
    var channels: [String: ChannelState] = [:]
    var liveChannelCount: [String: Int] = [:]
    var history: [String: BoundedHistory<ReceivedPush>] = [:]
    /// Channel-management requests accepted per bundle ID, for APNs' budget.
    var channelManagementRequests: [String: SlidingWindowBudget] = [:]

    /// Keeps `push` in the bounded history of its token or channel.
    mutating func record(_ push: ReceivedPush, capacity: Int) {
        history[push.target, default: BoundedHistory(capacity: capacity)].append(push)
    }

    /// Adds what later became of a recorded push (a held push delivered, discarded or expired).
    mutating func recordLaterOutcome(_ outcome: DeviceOutcome, of held: HeldPush) {
        history[held.historyKey]?.modify(where: { $0.requestID == held.requestID }) { $0.outcomes.append(outcome) }
    }
}

/// All the emulator's state, guarded by one lock in ``EmulatorState``. Every method is short and
/// runs inside the lock.
struct EmulatorWorld: Sendable {
    var keys: [String: APNSEmulatorSigningKey] = [:]
    var apps: [String: AppRegistration] = [:]
    var environments: [APNSEnvironment: EnvironmentWorld] = [:]
    var rejections: BoundedHistory<RejectedRequest>
    var counters = EmulatorCounters()
    /// Broadcasts answered whose delivery has not begun (`deliverAnsweredBroadcasts`), oldest first.
    var answeredBroadcasts: [AnsweredBroadcast] = []
    /// The answered broadcast being delivered, when a slice of its subscribers has been reached
    /// and not all: it comes before every one in `answeredBroadcasts`.
    var deliveryInProgress: BroadcastDelivery?

    /// Whether an answered broadcast has subscribers it has not reached yet.
    var hasUndeliveredBroadcasts: Bool { deliveryInProgress != nil || !answeredBroadcasts.isEmpty }

    let historyPerTarget: Int
    /// The apps the emulator plays, by bundle ID: where each one's Marquee is.
    var appMarquees: [String: EmulatedAppMarquee]
    /// Draws the traits of the played apps' devices, in registration order.
    var appTraitRandom: SeededRandom

    init(configuration: APNSEmulatorConfiguration) {
        appMarquees = configuration.apps
        appTraitRandom = SeededRandom(seed: configuration.appShares.seed)
        rejections = BoundedHistory(capacity: configuration.rejectionHistory)
        historyPerTarget = configuration.historyPerTarget
        for environment in APNSEnvironment.allCases {
            environments[environment] = EnvironmentWorld()
        }
    }

    /// Runs `body` on one environment's world in place. (Through the dictionary's in-place
    /// accessor: copying an environment out and back would copy its tables on every request.)
    mutating func withEnvironment<Result, Failure: Error>(
        _ environment: APNSEnvironment,
        _ body: (inout EnvironmentWorld) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try body(&environments[environment, default: EnvironmentWorld()])
    }

    mutating func recordRejection(_ rejection: RejectedRequest) {
        counters.rejected += 1
        counters.rejectedByReason[rejection.reason, default: 0] += 1
        rejections.append(rejection)
    }

    /// Whether `teamID` owns `bundleID`.
    func team(_ teamID: String, owns bundleID: String) -> Bool {
        apps[bundleID]?.teamID == teamID
    }
}

/// Errors of the emulator's own API (registration and inspection), not APNs responses.
public enum EmulatorError: Error, Sendable, Hashable, CustomStringConvertible {
    case unknownApp(bundleID: String)
    case appAlreadyRegistered(bundleID: String, teamID: String)
    case unknownDevice(id: String)
    case unknownActivity(id: String)
    case pushToStartNeedsIOS17_2(IOSVersion)
    case environmentNotServed(APNSEnvironment)
    case notRunning
    case alreadyStarted
    case invalidConfiguration(String)
    case appNotPlayed(bundleID: String)

    public var description: String {
        switch self {
        case .unknownApp(let bundleID): "no app \(bundleID) is registered with the emulator"
        case .appAlreadyRegistered(let bundleID, let teamID): "\(bundleID) already belongs to team \(teamID)"
        case .unknownDevice(let id): "no device \(id)"
        case .unknownActivity(let id): "no activity \(id)"
        case .pushToStartNeedsIOS17_2(let version): "push-to-start tokens need iOS 17.2 or later, not \(version)"
        case .environmentNotServed(let environment): "the emulator does not serve \(environment)"
        case .notRunning: "the emulator is not running"
        case .alreadyStarted: "the emulator was already started"
        case .invalidConfiguration(let message): "invalid emulator configuration: \(message)"
        case .appNotPlayed(let bundleID): "the emulator does not play \(bundleID): connect it to a Marquee first"
        }
    }
}
