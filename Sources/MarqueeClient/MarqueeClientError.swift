import Foundation

/// Why a call to a Marquee server failed, in a form a command line or a program can act on: the
/// server's problem document (RFC 9457) decoded, or the reason no answer came.
///
/// It never holds the API key: the key travels only in the `Authorization` header, which no
/// error copies.
public struct MarqueeClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is; the fields say the rest.
    public enum Kind: Sendable, Equatable {
        /// The server answered with an error status (4xx, 5xx), usually with a problem document.
        case problem
        /// No answer: the server could not be reached, or the connection broke before the answer.
        case unreachable
        /// The server answered, but not as the API document says (an undocumented status, a body
        /// that does not decode).
        case unexpectedResponse
        /// The caller's task was cancelled.
        case cancelled
    }

    /// One invalid field of a request, as the problem document's `errors` names it.
    public struct FieldError: Sendable, Equatable {
        /// The field's JSON Pointer in the request body (`/tokens/7/token`), or a parameter's name.
        public var pointer: String
        public var detail: String

        public init(pointer: String, detail: String) {
            self.pointer = pointer
            self.detail = detail
        }
    }

    public var kind: Kind
    /// The HTTP status of the answer, when there was one.
    public var status: Int?
    /// The problem's stable `type` (`/problems/not-found`), when the answer was a problem document.
    public var problemType: String?
    public var title: String
    public var detail: String?
    public var fieldErrors: [FieldError]
    /// APNs' reason, when APNs refused what the server asked of it.
    public var apnsReason: String?
    /// The request's ID: the server's `X-Request-ID` (or the problem's `instance`), else the one
    /// the client sent. Quote it when asking an operator to look at the server's logs.
    public var requestID: String?

    public init(
        kind: Kind,
        status: Int? = nil,
        problemType: String? = nil,
        title: String,
        detail: String? = nil,
        fieldErrors: [FieldError] = [],
        apnsReason: String? = nil,
        requestID: String? = nil
    ) {
        self.kind = kind
        self.status = status
        self.problemType = problemType
        self.title = title
        self.detail = detail
        self.fieldErrors = fieldErrors
        self.apnsReason = apnsReason
        self.requestID = requestID
    }

    /// `title: detail`, the way a person reads it first.
    public var description: String {
        guard let detail, !detail.isEmpty else { return title }
        return "\(title): \(detail)"
    }
}
