import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// An RFC 9457 problem document: what every error answer of the API is.
struct Problem: Error, Sendable, Encodable {
    /// A stable relative URI per kind of error, documented in the OpenAPI document.
    var type: String
    var title: String
    var status: Int
    var detail: String?
    /// The request ID.
    var instance: String?
    /// APNs' reason, as APNs sent it.
    var apnsReason: String?
    var errors: [FieldProblem]?
    /// Seconds to wait before retrying (a `Retry-After` header), for 429 and 503.
    var retryAfter: Int?

    /// One invalid input: a body field by its JSON Pointer, or a parameter by where it is
    /// (`in`: `path`, `query`, `header`) and its `name`.
    struct FieldProblem: Sendable, Encodable, Hashable {
        var pointer: String?
        var location: String?
        var name: String?
        var detail: String

        init(pointer: String, detail: String) {
            self.pointer = pointer
            self.detail = detail
        }

        init(parameter name: String, in location: String, detail: String) {
            self.location = location
            self.name = name
            self.detail = detail
        }

        enum CodingKeys: String, CodingKey {
            case pointer
            case location = "in"
            case name, detail
        }

        /// How a detail names it: `/plannedStart`, `query parameter limit`.
        var subject: String {
            if let name, let location { return "\(location) parameter \(name)" }
            return pointer ?? ""
        }
    }

    /// 422 for invalid input, its detail naming the one field or counting them.
    static func invalid(_ fields: [FieldProblem]) -> Problem {
        Problem(
            .invalidRequest,
            detail: fields.count == 1
                ? "\(fields[0].subject) \(fields[0].detail)" : "\(fields.count) inputs are invalid: see errors",
            errors: fields
        )
    }

    /// Extra headers of the answer (`Allow` on 405).
    var headers: [(HTTPField.Name, String)] = []

    enum CodingKeys: String, CodingKey {
        case type, title, status, detail, instance, apnsReason, errors
    }

    init(
        _ kind: ProblemKind,
        detail: String? = nil,
        apnsReason: String? = nil,
        errors: [FieldProblem]? = nil,
        retryAfter: Int? = nil
    ) {
        type = kind.type
        title = kind.title
        status = kind.status.code
        self.detail = detail
        self.apnsReason = apnsReason
        self.errors = errors
        self.retryAfter = retryAfter
    }

    static let contentType = "application/problem+json"

    /// Refusals answered before the request's body is read (a missing or wrong key, a throttled
    /// address, a body past the limit): their connection is closed once the answer is written
    /// (`HTTPExchangeObserver`), so that the body is never read.
    var closesConnection: Bool {
        [ProblemKind.unauthorized.type, ProblemKind.authenticationThrottled.type, ProblemKind.bodyTooLarge.type]
            .contains(type)
    }

    /// The answer: the document with its status and headers.
    func response(requestID: String?) -> Response {
        let (head, body) = answer(requestID: requestID)
        return Response(status: head.status, headers: head.headerFields, body: ResponseBody(byteBuffer: body))
    }

    /// The problem document as it is written: status, headers and JSON body, the request's ID as
    /// its `instance`.
    func answer(requestID: String?) -> (head: HTTPResponse, body: ByteBuffer) {
        var problem = self
        problem.instance = requestID
        let encoder = JSONEncoder()
        encoder.outputFormatting = JSONAnswerStyle.foundation
        let body =
            (try? encoder.encode(problem))
            ?? Data(#"{"status":500,"title":"Internal error","type":"/problems/internal"}"#.utf8)
        var headers = HTTPFields()
        headers[.contentType] = Self.contentType
        if let retryAfter { headers[.retryAfter] = String(retryAfter) }
        if status == 401 { headers[.wwwAuthenticate] = "Bearer" }
        if closesConnection { headers[.connection] = "close" }
        for (name, value) in self.headers { headers[name] = value }
        return (HTTPResponse(status: HTTPResponse.Status(code: status), headerFields: headers), ByteBuffer(bytes: body))
    }
}
