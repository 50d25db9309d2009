import Foundation

/// Broadcast channels. The row is reserved before APNs is asked, so that racing or retried
/// creations for one event and environment end with one live row.
public protocol ChannelStore: Sendable {
    /// Told after every committed change that may change an event's channel-ID answer (its
    /// channels, the event, its timeline's `close` step), whichever store call made it.
    var channelAnswerChanges: ChannelAnswerChanges { get }

    /// Inserts a `creating` row for the event and environment unless a live one exists, atomically.
    func reserveChannel(
        appID: AppID,
        eventID: EventID,
        environment: APNSEnvironment,
        storagePolicy: MessageStoragePolicy,
        requestID: UUID,
        at: Date
    ) async throws -> ChannelReservation

    /// Records APNs' channel ID and moves `creating` to `active`. An `orphaned` row that a
    /// reconciliation recorded for the same APNs ID meanwhile (APNs answered, the commit had not yet
    /// happened) is absorbed in the same step.
    func activateChannel(appID: AppID, id: ChannelID, apnsChannelID: String, at: Date) async throws -> BroadcastChannel

    /// Moves the channel to `state` if `ChannelState.canTransition(to:)` allows it from the state
    /// it is in at that moment; `StoreError.invalidTransition` otherwise.
    func transitionChannel(
        appID: AppID,
        id: ChannelID,
        to state: ChannelState,
        at: Date
    ) async throws -> BroadcastChannel

    /// Records a channel found at APNs that no row knows, as `orphaned`; returns the existing row if
    /// the ID is known after all.
    func recordOrphanedChannel(
        appID: AppID,
        environment: APNSEnvironment,
        apnsChannelID: String,
        storagePolicy: MessageStoragePolicy,
        at: Date
    ) async throws -> BroadcastChannel

    func channel(appID: AppID, id: ChannelID) async throws -> BroadcastChannel?
    /// The live (`creating`, `active` or `deleting`) channel of the event in the environment.
    func liveChannel(appID: AppID, eventID: EventID, environment: APNSEnvironment) async throws -> BroadcastChannel?
    func channels(
        appID: AppID,
        environment: APNSEnvironment,
        states: Set<ChannelState>
    ) async throws -> [BroadcastChannel]
    /// A page of the app's channels in `environments` and `states`, oldest first (`createdAt`, then
    /// `id`), strictly after `after`, at most `limit`, each with its event's key from the same read.
    func channelPage(
        appID: AppID,
        environments: Set<APNSEnvironment>,
        states: Set<ChannelState>,
        after: ChannelListPosition?,
        limit: Int
    ) async throws -> [ListedChannel]
    /// Every channel row of the event, in any state, oldest first.
    func channels(appID: AppID, eventID: EventID) async throws -> [BroadcastChannel]
    /// Channels counted against Apple's cap of `APNSPayloadLimit.channelsPerApp`.
    func channelCount(appID: AppID, environment: APNSEnvironment, states: Set<ChannelState>) async throws -> Int

    /// Takes the next `aps.timestamp` for a broadcast on the channel, `MonotonicTimestamp.next`,
    /// atomically: concurrent callers get distinct, strictly increasing values.
    func nextBroadcastTimestamp(appID: AppID, channelID: ChannelID, now: Int64) async throws -> Int64
    /// The event's `active` channel in the environment with the next timestamp taken on it as
    /// `nextBroadcastTimestamp` does, in one step: the channel comes back with the new value in
    /// `lastBroadcastTimestamp`. `nil` when the event has no active channel there.
    func takeBroadcastTimestamp(
        appID: AppID,
        eventID: EventID,
        environment: APNSEnvironment,
        now: Int64
    ) async throws -> BroadcastChannel?
}
