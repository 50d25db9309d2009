import Foundation

/// A position in an app's channel list (oldest first): the (`createdAt`, `id`) of the last one seen.
public struct ChannelListPosition: Sendable, Hashable {
    public var createdAt: Date
    public var id: ChannelID

    public init(createdAt: Date, id: ChannelID) {
        self.createdAt = createdAt
        self.id = id
    }
}
