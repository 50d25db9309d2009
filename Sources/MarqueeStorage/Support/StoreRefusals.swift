import Foundation
import MarqueeCore

/// Why a conditional update changed no row, worked out the same way on both backends: the row is
/// read back to tell "not this app's" from "not in the right state".
extension ChannelStore {
    func transitionRefusal(appID: AppID, id: ChannelID, to state: ChannelState) async throws -> StoreError {
        guard let current = try await channel(appID: appID, id: id) else {
            return .notFound(entity: "channel", id: id.description)
        }
        return .invalidTransition(entity: "channel", id: id.description, from: current.state.rawValue, to: state.rawValue)
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

extension StoreConfiguration {
    /// A signing key's PEM sealed for its row, and the master key that sealed it.
    func sealSigningKey(_ key: SigningKey, privateKeyPEM: String) throws -> (sealed: [UInt8], masterKeyID: String) {
        let sealer = try requireSealer()
        let sealed = try sealer.seal(
            Array(privateKeyPEM.utf8),
            context: Self.sealContext(appID: key.appID, signingKeyID: key.id)
        )
        return (sealed, sealer.current.id)
    }

    /// A signing key sealed by an older master key, sealed again under the current one.
    func resealSigningKey(_ sealed: [UInt8], appID: AppID, id: SigningKeyID) throws -> (sealed: [UInt8], masterKeyID: String) {
        let sealer = try requireSealer()
        let context = Self.sealContext(appID: appID, signingKeyID: id)
        return (try sealer.seal(try sealer.unseal(sealed, context: context), context: context), sealer.current.id)
    }

    func unsealSigningKey(_ sealed: [UInt8], appID: AppID, id: SigningKeyID) throws -> String {
        let plaintext = try requireSealer().unseal(sealed, context: Self.sealContext(appID: appID, signingKeyID: id))
        return String(decoding: plaintext, as: UTF8.self)
    }
}
