import Foundation

/// A typed UUID: an `Identifier<Event>` cannot be passed where an `Identifier<BroadcastChannel>` is expected.
public struct Identifier<Entity>: Hashable, Sendable, Codable, CustomStringConvertible {
    public let uuid: UUID

    public init(_ uuid: UUID = UUID.random()) {
        self.uuid = uuid
    }

    /// An identifier that sorts by when it was made (`UUID.timeOrdered(at:)`): for rows written in
    /// bulk, whose primary key a random one would scatter.
    public init(timeOrderedAt date: Date) {
        self.uuid = UUID.timeOrdered(at: date)
    }

    /// Parses the canonical UUID string form; `nil` for anything else.
    public init?(uuidString: String) {
        guard let uuid = UUID(uuidString: uuidString) else { return nil }
        self.uuid = uuid
    }

    public var description: String { uuid.lowercasedText }

    public init(from decoder: any Decoder) throws {
        uuid = try decoder.singleValueContainer().decode(UUID.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(uuid)
    }
}

public typealias AppID = Identifier<App>
public typealias SigningKeyID = Identifier<SigningKey>
public typealias APIKeyID = Identifier<APIKey>
public typealias EventID = Identifier<Event>
public typealias ChannelID = Identifier<BroadcastChannel>
public typealias ActivityRecordID = Identifier<Activity>
public typealias JobID = Identifier<Job>
public typealias ScheduleID = Identifier<Schedule>
