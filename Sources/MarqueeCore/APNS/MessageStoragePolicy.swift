/// A broadcast channel's `message-storage-policy`, fixed when the channel is created.
public enum MessageStoragePolicy: Int, Sendable, Hashable, Codable, CaseIterable {
    /// No Message Stored: a higher publishing budget for frequent updates (sports);
    /// every broadcast must carry `apns-expiration: 0`.
    case noMessageStored = 0
    /// Most Recent Message Stored: infrequent updates (flights); APNs keeps the latest message
    /// for at most eight hours.
    case mostRecentMessageStored = 1

    /// The longest APNs keeps a message on a `mostRecentMessageStored` channel.
    public static let maximumStorageSeconds: Int64 = 8 * 60 * 60
}
