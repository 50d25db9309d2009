import Foundation
import MarqueeCore

/// What one broadcast did in each environment of the event.
public struct BroadcastReport: Sendable, Hashable {
    public var event: Event
    public var kind: BroadcastEvent
    /// One per environment asked for, in environment order.
    public var results: [EnvironmentBroadcast]

    /// Whether APNs accepted the broadcast in every environment.
    public var allAccepted: Bool { results.allSatisfy(\.isAccepted) }
    /// Whether APNs accepted it in at least one.
    public var anyAccepted: Bool { results.contains(where: \.isAccepted) }
}

/// One environment's broadcast: the channel's request and APNs' answer.
public struct EnvironmentBroadcast: Sendable, Hashable {
    public enum Outcome: Sendable, Hashable {
        /// APNs answered 200.
        case accepted(requestID: String, uniqueID: String?)
        /// APNs refused it, or could not be reached (`status` 0). `channelDeleted` when APNs said
        /// the channel is gone and Marquee marked it deleted.
        case failed(status: Int, reason: APNSErrorReason?, detail: String, channelDeleted: Bool)
        /// The event has no active channel in the environment; nothing was sent.
        case noActiveChannel(detail: String)
    }

    public var environment: APNSEnvironment
    public var channel: BroadcastChannel?
    public var outcome: Outcome
    /// The `apns-request-id` Marquee sent (set when a request was sent).
    public var requestID: UUID?
    /// `aps.timestamp` (Unix seconds), when a request was sent.
    public var timestamp: Int64?
    public var expiration: APNSExpirationValue?
    public var decision: PriorityDecision?
    public var latency: Duration?
    /// The job that pushes the broadcast to the event's activities on update tokens, when it has
    /// some in this environment.
    public var activityUpdates: ActivityUpdateEnqueued?

    /// APNs accepted the channel's broadcast, or (with no channel) the activities' pushes are on
    /// their way.
    public var isAccepted: Bool {
        switch outcome {
        case .accepted: true
        case .noActiveChannel: activityUpdates != nil
        case .failed: false
        }
    }
}

/// `apns-expiration` as sent: Unix seconds, `0` for "do not store".
public typealias APNSExpirationValue = Int64

extension BroadcastReport {
    /// The error the whole broadcast stands for when APNs accepted it nowhere; `nil` when it did
    /// somewhere (a partial answer is not an error).
    public var failure: EngineError? {
        guard !anyAccepted else { return nil }
        var goneReason: APNSErrorReason?
        var gone = true
        var firstFailure: (status: Int, reason: APNSErrorReason?, detail: String)?
        for result in results {
            switch result.outcome {
            case .accepted:
                break
            case .noActiveChannel:
                break
            case .failed(let status, let reason, let detail, let channelDeleted):
                if channelDeleted || reason == .channelNotRegistered || reason == .badChannelId {
                    goneReason = goneReason ?? reason
                } else {
                    gone = false
                    if firstFailure == nil { firstFailure = (status, reason, detail) }
                }
            }
        }
        if gone { return .channelGone(environments: results.map(\.environment), reason: goneReason) }
        guard let firstFailure else { return nil }
        if let reason = firstFailure.reason, firstFailure.status != 0, firstFailure.status != 429,
            firstFailure.status < 500
        {
            return .apnsRejected(status: firstFailure.status, reason: reason)
        }
        return .apnsUnavailable(firstFailure.detail)
    }
}
