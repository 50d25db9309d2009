import Foundation
import MarqueeAPNS
import MarqueeCore

/// What the engine asks of APNs to manage broadcast channels of one app in one environment.
public protocol APNSChannelManaging: AnyObject, Sendable {
    /// Creates a channel; `requestID` lets a retry after a crash be matched with the first attempt.
    func createChannel(
        bundleID: String,
        storagePolicy: MessageStoragePolicy,
        requestID: UUID
    ) async throws(APNSError) -> APNSChannelCreated

    /// Reads a channel's configuration.
    func readChannel(
        bundleID: String,
        channelID: String,
        requestID: UUID
    ) async throws(APNSError) -> APNSChannelConfiguration

    /// The IDs of every channel of the app in this environment.
    func listChannels(bundleID: String, requestID: UUID) async throws(APNSError) -> [String]

    /// Deletes a channel; one APNs does not know counts as deleted (`.alreadyGone`).
    @discardableResult
    func deleteChannel(
        bundleID: String,
        channelID: String,
        requestID: UUID
    ) async throws(APNSError) -> APNSChannelDeletion
}

/// The calls with a fresh request ID, as `APNSClient`'s defaults give them (a protocol's requirements
/// take no default arguments).
extension APNSChannelManaging {
    public func createChannel(
        bundleID: String,
        storagePolicy: MessageStoragePolicy
    ) async throws(APNSError) -> APNSChannelCreated {
        try await createChannel(bundleID: bundleID, storagePolicy: storagePolicy, requestID: UUID.random())
    }

    public func readChannel(bundleID: String, channelID: String) async throws(APNSError) -> APNSChannelConfiguration {
        try await readChannel(bundleID: bundleID, channelID: channelID, requestID: UUID.random())
    }

    public func listChannels(bundleID: String) async throws(APNSError) -> [String] {
        try await listChannels(bundleID: bundleID, requestID: UUID.random())
    }

    @discardableResult
    public func deleteChannel(bundleID: String, channelID: String) async throws(APNSError) -> APNSChannelDeletion {
        try await deleteChannel(bundleID: bundleID, channelID: channelID, requestID: UUID.random())
    }
}

extension APNSClient: APNSChannelManaging {}
