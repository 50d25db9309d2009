import MarqueeCore

/// Why a use case refused or failed, in the engine's own words. The HTTP layer maps every case to
/// a problem document; nothing here knows about HTTP.
public enum EngineError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No such resource for this app (another app's resources are "not found" too).
    case notFound(resource: String, id: String)
    /// The input is invalid; every offending field is named.
    case invalidInput([FieldError])
    /// The resource exists and its state or fixed fields do not allow the change.
    case conflict(String)
    /// Creating another channel would pass Apple's cap of channels per app and environment.
    case channelQuotaExceeded(environment: APNSEnvironment, used: Int, limit: Int)
    /// The app cannot talk to APNs yet (no signing key, or none usable in the environment).
    case appNotConfigured(String)
    /// APNs says the app's bundle lacks the Broadcast capability: the operator must enable it.
    case broadcastNotEnabled(bundleID: String, reason: APNSErrorReason)
    /// The environment is not among the app's environments.
    case environmentNotEnabled(APNSEnvironment)
    /// APNs refused the request for good.
    case apnsRejected(status: Int, reason: APNSErrorReason)
    /// APNs could not be reached or kept answering "later" until the retries ran out.
    case apnsUnavailable(String)
    /// A unique value is taken (a bundle ID by another app).
    case duplicate(String)
    /// The event's channel is gone: APNs answered `reason` (`ChannelNotRegistered`, `BadChannelId`)
    /// and Marquee marked it deleted, or the event has no active channel in the environment.
    case channelGone(environments: [APNSEnvironment], reason: APNSErrorReason?)
    /// The schedule's state does not allow the change (it began, ran, or belongs to a timeline).
    case scheduleConflict(String)
    /// The job's kind or state does not allow this (a resend of uncertain starts from a job that is
    /// not a finished start with uncertain tokens).
    case jobConflict(String)
    /// The push-to-start token (redacted) is not registered for the attributes type in the
    /// environment: the app registers it first.
    case tokenNotRegistered(token: String, attributesType: String, environment: APNSEnvironment)
    /// The caller did this too often; it may again after `retryAfterSeconds`.
    case rateLimited(String, retryAfterSeconds: Int)

    public var description: String {
        switch self {
        case .notFound(let resource, let id): "\(resource) \(id) not found"
        case .invalidInput(let errors): "invalid input: " + errors.map(\.description).joined(separator: "; ")
        case .conflict(let detail): detail
        case .channelQuotaExceeded(let environment, let used, let limit):
            """
            the app has \(used) of Apple's \(limit) channels in \(environment): delete channels of finished \
            events first
            """
        case .appNotConfigured(let detail): detail
        case .broadcastNotEnabled(let bundleID, let reason):
            """
            APNs answered \(reason.reasonString) for \(bundleID): enable the Broadcast capability for the app in \
            Apple's developer portal
            """
        case .environmentNotEnabled(let environment): "the app does not use the \(environment) environment"
        case .apnsRejected(let status, let reason): "APNs refused the request: \(status) \(reason.reasonString)"
        case .apnsUnavailable(let detail): "APNs is unavailable: \(detail)"
        case .duplicate(let detail): detail
        case .channelGone(let environments, let reason):
            "the event has no usable channel in \(environments.map(\.rawValue).joined(separator: ", "))"
                + (reason.map { ": APNs answered \($0.reasonString) and Marquee marked the channel deleted" } ?? "")
                + "; put the event again (PUT /v1/events/{eventKey}) to create a new channel"
        case .scheduleConflict(let detail): detail
        case .jobConflict(let detail): detail
        case .tokenNotRegistered(let token, let attributesType, let environment):
            """
            push-to-start token \(token) is not registered for \(attributesType) in \(environment): register it \
            first (PUT /v1/push-to-start-tokens/{token})
            """
        case .rateLimited(let detail, _): detail
        }
    }
}

/// One invalid field: where it is (a JSON Pointer into the request body, or a parameter name) and
/// what is wrong with it.
public struct FieldError: Sendable, Hashable, CustomStringConvertible {
    public var pointer: String
    public var detail: String

    public init(_ pointer: String, _ detail: String) {
        self.pointer = pointer
        self.detail = detail
    }

    public var description: String { "\(pointer): \(detail)" }
}

extension EngineError {
    /// Whether trying again later may succeed (APNs was unreachable); every other case is an
    /// answer that stays the same.
    public var isTransient: Bool {
        if case .apnsUnavailable = self { return true }
        return false
    }
}
