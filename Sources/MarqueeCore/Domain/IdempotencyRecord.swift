import Foundation

/// A response kept for an `Idempotency-Key`, replayed when the same request comes again.
public struct StoredResponse: Sendable, Hashable {
    public var status: Int
    public var contentType: String?
    public var body: [UInt8]

    public init(status: Int, contentType: String? = nil, body: [UInt8]) {
        self.status = status
        self.contentType = contentType
        self.body = body
    }
}

/// An idempotency key of one app: the request it was first used with (as a hash) and, once the
/// request finished, its response.
public struct IdempotencyRecord: Sendable, Hashable {
    public var appID: AppID
    public var key: String
    /// A hash of the request (method, path, body) the key was first used with.
    public var requestHash: String
    /// `nil` while the first request is still in progress.
    public var response: StoredResponse?
    public var createdAt: Date
    public var expiresAt: Date

    public init(
        appID: AppID,
        key: String,
        requestHash: String,
        response: StoredResponse?,
        createdAt: Date,
        expiresAt: Date
    ) {
        self.appID = appID
        self.key = key
        self.requestHash = requestHash
        self.response = response
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }
}

/// The answer to claiming an idempotency key.
public enum IdempotencyClaim: Sendable, Hashable {
    /// The key is new (or had expired): the caller runs the request and then completes the key.
    case claimed
    /// The same request already finished: replay this response.
    case completed(StoredResponse)
    /// The same request is still running elsewhere.
    case inProgress
    /// The key was used with a different request.
    case mismatch
}

extension IdempotencyClaim {
    /// How a key already held by a live (unexpired) row answers a new request.
    public init(existingRequestHash: String, requestHash: String, response: StoredResponse?) {
        if existingRequestHash != requestHash {
            self = .mismatch
        } else if let response {
            self = .completed(response)
        } else {
            self = .inProgress
        }
    }
}
