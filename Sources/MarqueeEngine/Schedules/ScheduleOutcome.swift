import Foundation
import MarqueeCore

/// What came of a schedule, as kept in `Schedule.outcome`: the start's jobs, the broadcast's
/// result per environment, the channels made, the event closed, or why nothing was done.
public struct ScheduleOutcome: Sendable, Hashable, Codable {
    /// The start jobs it enqueued (one per environment), followed at `/v1/jobs/{jobID}`.
    public var startJobs: [JobID]
    /// The broadcast's result in each environment.
    public var broadcast: [ScheduledBroadcastResult]?
    /// The event's channels (the timeline's `channels` step).
    public var channels: [ScheduledChannel]?
    /// Whether it closed the event (the timeline's `close` step).
    public var closed: Bool
    /// Why nothing was done.
    public var skipped: String?

    public init(
        startJobs: [JobID] = [],
        broadcast: [ScheduledBroadcastResult]? = nil,
        channels: [ScheduledChannel]? = nil,
        closed: Bool = false,
        skipped: String? = nil
    ) {
        self.startJobs = startJobs
        self.broadcast = broadcast
        self.channels = channels
        self.closed = closed
        self.skipped = skipped
    }

    /// The outcome as stored.
    public var jsonValue: JSONValue {
        // Encoding plain values to JSON and reading them back as JSONValue cannot fail.
        (try? JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(self))) ?? .null
    }

    /// A stored outcome; `nil` for one this version cannot read.
    public init?(json value: JSONValue) {
        guard let data = try? JSONEncoder().encode(value),
            let outcome = try? JSONDecoder().decode(Self.self, from: data)
        else { return nil }
        self = outcome
    }
}

/// One environment's result of a scheduled broadcast, as the broadcast's answer gives it.
public struct ScheduledBroadcastResult: Sendable, Hashable, Codable {
    public enum Status: String, Sendable, Hashable, Codable {
        case accepted
        case failed
        case skipped
    }

    public var environment: APNSEnvironment
    public var status: Status
    /// APNs' channel ID.
    public var channelID: String?
    public var apnsRequestID: String?
    public var apnsUniqueID: String?
    public var timestamp: Int64?
    public var apnsExpiration: Int64?
    public var priority: Int?
    public var requestedPriority: Int?
    public var downgraded: Bool?
    /// Why the priority was downgraded, or why the environment failed or was skipped.
    public var reason: String?
    public var httpStatus: Int?
    public var apnsReason: String?
    public var channelDeleted: Bool?
    public var latencyMicroseconds: Int64?

    public init(_ result: EnvironmentBroadcast) {
        environment = result.environment
        status = .skipped
        channelID = result.channel?.apnsChannelID
        apnsRequestID = result.requestID?.lowercasedText
        timestamp = result.timestamp
        apnsExpiration = result.expiration
        priority = result.decision?.priority.rawValue
        requestedPriority = result.decision?.requested.rawValue
        downgraded = result.decision?.downgraded
        reason = result.decision?.downgradeReason
        latencyMicroseconds = result.latency?.wholeMicroseconds
        switch result.outcome {
        case .accepted(let requestID, let uniqueID):
            status = .accepted
            apnsRequestID = requestID
            apnsUniqueID = uniqueID
        case .failed(let status, let reason, let detail, let channelDeleted):
            self.status = .failed
            httpStatus = status
            apnsReason = reason?.reasonString
            self.channelDeleted = channelDeleted
            self.reason = detail
        case .noActiveChannel(let detail):
            reason = detail
        }
    }
}

/// A channel the timeline's `channels` step made (or found).
public struct ScheduledChannel: Sendable, Hashable, Codable {
    public var environment: APNSEnvironment
    public var id: ChannelID
    /// APNs' channel ID.
    public var channelID: String?

    public init(_ channel: BroadcastChannel) {
        environment = channel.environment
        id = channel.id
        channelID = channel.apnsChannelID
    }
}
