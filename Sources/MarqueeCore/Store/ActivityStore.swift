import Foundation

/// Live Activities on devices and their update tokens.
public protocol ActivityStore: Sendable {
    func recordActivity(_ activity: Activity) async throws
    func activity(appID: AppID, id: ActivityRecordID) async throws -> Activity?
    func activity(appID: AppID, activityID: String) async throws -> Activity?
    /// Records what the device reported: its ActivityKit ID and a (possibly rotated) update token.
    /// The previous current token is retired in the same step.
    func recordUpdateToken(
        appID: AppID,
        id: ActivityRecordID,
        activityID: String,
        token: String,
        at: Date
    ) async throws -> Activity
    func setActivityState(appID: AppID, id: ActivityRecordID, state: ActivityState, at: Date) async throws -> Bool
    /// Takes the next `aps.timestamp` for a device push to the activity, atomically, like
    /// `ChannelStore.nextBroadcastTimestamp`.
    func nextActivityTimestamp(appID: AppID, id: ActivityRecordID, now: Int64) async throws -> Int64
}
