import Foundation

/// A broadcast channel's place in its life. At most one channel per event and environment is live
/// (`creating`, `active` or `deleting`) at any time.
public enum ChannelState: String, Sendable, Hashable, Codable, CaseIterable {
    /// The row exists and APNs is being asked to create the channel (not idempotent at APNs).
    case creating
    /// APNs created it; its ID is known and broadcasts go to it.
    case active
    /// Deletion at APNs has been decided and may be in flight.
    case deleting
    /// Deleted at APNs. Terminal.
    case deleted
    /// Found at APNs with no row that knows it (a crash between create and record); deleted after
    /// a grace period. Has no event.
    case orphaned

    /// The states the one-live-channel-per-event-and-environment rule counts.
    public static let live: Set<ChannelState> = [.creating, .active, .deleting]

    public var isLive: Bool { Self.live.contains(self) }

    /// Whether the lifecycle allows moving from this state to `next`.
    public func canTransition(to next: ChannelState) -> Bool {
        switch (self, next) {
        case (.creating, .active), (.creating, .deleted), (.creating, .deleting): true
        case (.active, .deleting), (.active, .deleted): true
        case (.deleting, .deleted): true
        case (.orphaned, .deleting), (.orphaned, .deleted): true
        default: false
        }
    }
}

/// A broadcast channel as Marquee records it.
public struct BroadcastChannel: Sendable, Hashable {
    public var id: ChannelID
    public var appID: AppID
    /// The event the channel serves; `nil` only for orphans found at APNs.
    public var eventID: EventID?
    public var environment: APNSEnvironment
    /// APNs' base64 channel ID, known once APNs created the channel. Its length is not assumed.
    public var apnsChannelID: String?
    public var storagePolicy: MessageStoragePolicy
    public var state: ChannelState
    /// The `apns-request-id` sent with the create request, fixed when the row is reserved so that
    /// a retried create can be matched in logs.
    public var createRequestID: UUID
    /// The last `aps.timestamp` (seconds) broadcast on the channel.
    public var lastBroadcastTimestamp: Int64?
    public var createdAt: Date
    public var updatedAt: Date

    public init(
        id: ChannelID = ChannelID(),
        appID: AppID,
        eventID: EventID?,
        environment: APNSEnvironment,
        apnsChannelID: String? = nil,
        storagePolicy: MessageStoragePolicy,
        state: ChannelState,
        createRequestID: UUID = UUID.random(),
        lastBroadcastTimestamp: Int64? = nil,
        createdAt: Date,
        updatedAt: Date? = nil
    ) {
        self.id = id
        self.appID = appID
        self.eventID = eventID
        self.environment = environment
        self.apnsChannelID = apnsChannelID
        self.storagePolicy = storagePolicy
        self.state = state
        self.createRequestID = createRequestID
        self.lastBroadcastTimestamp = lastBroadcastTimestamp
        self.createdAt = createdAt
        self.updatedAt = updatedAt ?? createdAt
    }
}

/// The outcome of reserving the channel row for an event and environment.
public enum ChannelReservation: Sendable, Hashable {
    /// This call inserted the row in state `creating`; the caller creates the channel at APNs.
    case reserved(BroadcastChannel)
    /// A live row already existed (another replica or an earlier attempt); nothing was inserted.
    case existing(BroadcastChannel)

    public var channel: BroadcastChannel {
        switch self {
        case .reserved(let channel), .existing(let channel): channel
        }
    }
}
