import Foundation
import MarqueeCore

/// Why a conditional update changed no row, worked out the same way on both backends: the row is
/// read back to tell "not this app's" from "not in the right state".
extension ChannelStore {
    func transitionRefusal(appID: AppID, id: ChannelID, to state: ChannelState) async throws -> StoreError {
        guard let current = try await channel(appID: appID, id: id) else {
            return .notFound(entity: "channel", id: id.description)
        }
        return .invalidTransition(
            entity: "channel",
            id: id.description,
            from: current.state.rawValue,
            to: state.rawValue
        )
    }

    func broadcastRefusal(appID: AppID, id: ChannelID) async throws -> StoreError {
        guard let current = try await channel(appID: appID, id: id) else {
            return .notFound(entity: "channel", id: id.description)
        }
        return .notActive(entity: "channel", id: id.description, state: current.state.rawValue)
    }
}

extension ActivityStore {
    /// The activity as stored after a change that just succeeded.
    func reloaded(appID: AppID, id: ActivityRecordID) async throws -> Activity {
        guard let activity = try await activity(appID: appID, id: id) else {
            throw StoreError.notFound(entity: "activity", id: id.description)
        }
        return activity
    }
}
