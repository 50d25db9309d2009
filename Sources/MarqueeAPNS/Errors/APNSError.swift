import MarqueeCore
import NIOCore

/// Every way an APNs operation can fail. Secrets (keys, provider tokens) are never part of it.
public enum APNSError: Error, Sendable, Hashable, CustomStringConvertible {
    /// APNs answered with an error status.
    case rejected(APNSRejection)
    /// The payload is larger than APNs accepts; nothing was sent.
    case payloadTooLarge(size: Int, limit: Int)
    /// The request cannot be sent as given (a malformed device token, a collapse ID over 64 bytes…).
    case invalidRequest(String)
    /// No connection to APNs could be made within the retry policy: the request was never written.
    case connectionFailed(String)
    /// APNs answered something that is not APNs' protocol (a missing `apns-channel-id` on a 201, …).
    case invalidResponse(String)
    /// The provider token could not be signed.
    case tokenSigningFailed
    /// The request was written to APNs and no answer came (the connection closed or was reset with
    /// it in flight, its stream was reset other than with `REFUSED_STREAM`, or a GOAWAY covered it
    /// and it never got an answer): APNs may have delivered it. The client never sends a start or a
    /// channel creation again after this; what it may resend (updates, ends, broadcasts, channel
    /// reads, lists and deletes) ends here only when its retries ran out.
    case uncertain(String)
    /// The client was shut down before the request was written.
    case clientShutDown
    /// The caller stopped waiting (task cancellation) before the request completed.
    case cancelled
    /// The client's configuration cannot work (an unreadable CA file, …).
    case invalidConfiguration(String)

    /// What a caller should do about it.
    public var failureClass: APNSFailureClass {
        switch self {
        case .rejected(let rejection): rejection.failureClass
        case .connectionFailed, .clientShutDown, .cancelled: .retryLater
        case .uncertain: .uncertain
        case .payloadTooLarge, .invalidRequest, .invalidResponse, .tokenSigningFailed, .invalidConfiguration:
            .requestRejected
        }
    }

    /// The APNs reason, when APNs gave one.
    public var reason: APNSErrorReason? {
        if case .rejected(let rejection) = self { return rejection.reason }
        return nil
    }

    public var description: String {
        switch self {
        case .rejected(let rejection): rejection.description
        case .payloadTooLarge(let size, let limit): "payload is \(size) bytes, over the APNs limit of \(limit) bytes"
        case .invalidRequest(let why): "invalid APNs request: \(why)"
        case .connectionFailed(let why): "APNs connection failed: \(why)"
        case .invalidResponse(let why): "invalid APNs response: \(why)"
        case .tokenSigningFailed: "the provider token could not be signed"
        case .uncertain(let why): "APNs may or may not have received the request: \(why)"
        case .clientShutDown: "the APNs client was shut down"
        case .cancelled: "the APNs request was cancelled"
        case .invalidConfiguration(let why): "invalid APNs client configuration: \(why)"
        }
    }
}

extension LiveActivityPayload {
    /// The body as a buffer, checked against `limit` before anything is sent.
    func encodedBuffer(limit: Int) throws(APNSError) -> ByteBuffer {
        do {
            return ByteBuffer(bytes: try encoded(limit: limit))
        } catch {
            switch error {
            case .tooLarge(let size, let limit): throw .payloadTooLarge(size: size, limit: limit)
            }
        }
    }
}
