import HTTPTypes

/// Every kind of problem the API answers with: its stable `type`, title and status.
enum ProblemKind: String, Sendable, CaseIterable {
    case unauthorized
    case authenticationThrottled = "authentication-throttled"
    case forbidden
    case notFound = "not-found"
    case methodNotAllowed = "method-not-allowed"
    case malformedRequest = "malformed-request"
    case invalidRequest = "invalid-request"
    case jsonTooDeep = "json-too-deep"
    case bodyTooLarge = "body-too-large"
    case unsupportedMediaType = "unsupported-media-type"
    case duplicate
    case eventConflict = "event-conflict"
    case channelQuotaExceeded = "channel-quota-exceeded"
    case appNotConfigured = "app-not-configured"
    case broadcastNotEnabled = "broadcast-not-enabled"
    case environmentNotEnabled = "environment-not-enabled"
    case apnsRejected = "apns-rejected"
    case apnsUnavailable = "apns-unavailable"
    case storeUnavailable = "store-unavailable"
    case idempotencyKeyReused = "idempotency-key-reused"
    case idempotencyInProgress = "idempotency-in-progress"
    case channelGone = "channel-gone"
    case scheduleConflict = "schedule-conflict"
    /// The client went away before its request's body had arrived: nobody reads this answer; it is
    /// counted (status 499, as nginx names it) and logged at debug, not as the server's failure.
    case requestAbandoned = "request-abandoned"
    case jobConflict = "job-conflict"
    /// A device reported what it shows more often than `presence.reportsPerMinute` allows.
    case tooManyReports = "too-many-reports"
    case internalError = "internal"

    var type: String { "/problems/\(rawValue)" }

    var status: HTTPResponse.Status {
        switch self {
        case .unauthorized: .unauthorized
        case .authenticationThrottled, .tooManyReports: .tooManyRequests
        case .forbidden: .forbidden
        case .notFound: .notFound
        case .methodNotAllowed: .methodNotAllowed
        case .malformedRequest: .badRequest
        case .invalidRequest, .jsonTooDeep, .idempotencyKeyReused, .environmentNotEnabled: .unprocessableContent
        case .bodyTooLarge: .contentTooLarge
        case .unsupportedMediaType: .unsupportedMediaType
        case .duplicate, .eventConflict, .channelQuotaExceeded, .appNotConfigured, .broadcastNotEnabled,
            .idempotencyInProgress, .channelGone, .scheduleConflict, .jobConflict:
            .conflict
        case .apnsRejected: .badGateway
        case .apnsUnavailable, .storeUnavailable: .serviceUnavailable
        case .requestAbandoned: HTTPResponse.Status(code: 499, reasonPhrase: "Client Closed Request")
        case .internalError: .internalServerError
        }
    }

    var title: String {
        switch self {
        case .unauthorized: "A valid API key is required"
        case .authenticationThrottled: "Too many failed authentications from this address"
        case .forbidden: "The API key's role does not allow this"
        case .notFound: "Not found"
        case .methodNotAllowed: "Method not allowed"
        case .malformedRequest: "Malformed request"
        case .invalidRequest: "Invalid request"
        case .jsonTooDeep: "JSON nested too deeply"
        case .bodyTooLarge: "Request body too large"
        case .unsupportedMediaType: "Unsupported media type"
        case .duplicate: "Already exists"
        case .eventConflict: "The event does not allow this change"
        case .channelQuotaExceeded: "Channel quota exceeded"
        case .appNotConfigured: "The app is not configured for APNs"
        case .broadcastNotEnabled: "Broadcast is not enabled for the app"
        case .environmentNotEnabled: "Environment not enabled for the app"
        case .apnsRejected: "APNs rejected the request"
        case .apnsUnavailable: "APNs is unavailable"
        case .storeUnavailable: "The store is unavailable"
        case .idempotencyKeyReused: "Idempotency key reused with another request"
        case .idempotencyInProgress: "A request with this idempotency key is in progress"
        case .channelGone: "The event's channel is gone"
        case .scheduleConflict: "The schedule does not allow this change"
        case .requestAbandoned: "The client closed the request"
        case .jobConflict: "The job does not allow this"
        case .tooManyReports: "The device reports too often"
        case .internalError: "Internal error"
        }
    }
}
