import Foundation
import HTTPTypes
import Hummingbird
import MarqueeCore
import MarqueeEngine
import OpenAPIRuntime

extension Problem {
    /// The problem an error thrown while handling a request stands for. Details of unexpected
    /// errors are logged by the caller, never put in the answer.
    init(_ error: any Error) {
        switch error {
        case let problem as Problem:
            self = problem
        case let error as EngineError:
            self.init(engine: error)
        case let error as StoreError:
            self.init(store: error)
        case is StoreCallTimedOut:
            self.init(
                .storeUnavailable,
                detail:
                    """
                    the database did not answer in time; the request may or may not have taken effect, so retry \
                    it with the same Idempotency-Key
                    """,
                retryAfter: 5
            )
        case let error as ServerError:
            self.init(openAPI: error)
        case let error as HTTPError:
            self.init(http: error)
        case let error as DecodingError:
            self.init(decoding: error)
        default:
            self.init(
                .internalError,
                detail: "the request failed unexpectedly; the server log has the details under this request ID"
            )
        }
    }

    init(engine error: EngineError) {
        switch error {
        case .notFound(let resource, let id):
            self.init(.notFound, detail: "\(resource) \(id) not found")
        case .invalidInput(let fields):
            self = .invalid(fields.map(FieldProblem.init))
        case .conflict(let detail):
            self.init(.eventConflict, detail: detail)
        case .channelQuotaExceeded:
            self.init(.channelQuotaExceeded, detail: error.description)
        case .appNotConfigured(let detail):
            self.init(.appNotConfigured, detail: detail)
        case .broadcastNotEnabled(_, let reason):
            self.init(.broadcastNotEnabled, detail: error.description, apnsReason: reason.reasonString)
        case .environmentNotEnabled:
            self.init(.environmentNotEnabled, detail: error.description + ": add it to the app's environments first")
        case .apnsRejected(_, let reason):
            self.init(.apnsRejected, detail: error.description, apnsReason: reason.reasonString)
        case .apnsUnavailable(let detail):
            self.init(.apnsUnavailable, detail: "\(detail); nothing was changed, try again later", retryAfter: 5)
        case .duplicate(let detail):
            self.init(.duplicate, detail: detail)
        case .channelGone(_, let reason):
            self.init(.channelGone, detail: error.description, apnsReason: reason?.reasonString)
        case .scheduleConflict(let detail):
            self.init(.scheduleConflict, detail: detail)
        case .jobConflict(let detail):
            self.init(.jobConflict, detail: detail)
        case .tokenNotRegistered:
            self.init(.notFound, detail: error.description)
        case .rateLimited(let detail, let retryAfterSeconds):
            self.init(.tooManyReports, detail: detail, retryAfter: retryAfterSeconds)
        }
    }

    init(store error: StoreError) {
        switch error {
        case .notFound(let entity, let id): self.init(.notFound, detail: "\(entity) \(id) not found")
        case .duplicate: self.init(.duplicate, detail: error.description)
        case .invalidTransition, .notActive: self.init(.eventConflict, detail: error.description)
        case .leaseLost, .corruptRow:
            self.init(.internalError, detail: "the store refused the operation; the server log has the details")
        }
    }

    /// What the generated server code throws: the handler's own error wrapped, or a request that
    /// does not match the document (a runtime error of the generated code). `ContractMiddleware`
    /// holds parameters and bodies to the document first, so these are the rare rest; their texts
    /// name the runtime's types and are not shown.
    init(openAPI error: ServerError) {
        let underlying = error.underlyingError
        if let decoding = underlying as? DecodingError {
            self.init(decoding: decoding)
            return
        }
        guard String(reflecting: Swift.type(of: underlying)).contains("RuntimeError") else {
            self.init(underlying)
            return
        }
        let text = String(describing: underlying)
        if text.localizedCaseInsensitiveContains("content type") {
            self.init(.unsupportedMediaType, detail: "send the body as application/json")
        } else if text.localizedCaseInsensitiveContains("body") {
            self.init(
                .malformedRequest,
                detail: "the request needs a JSON body matching the operation's schema (see /openapi.json)"
            )
        } else if let name = Self.quotedName(in: text), text.contains("header") {
            self = .invalid([FieldProblem(parameter: name, in: "header", detail: "is required")])
        } else if let name = Self.namedParameter(in: text, after: "query parameter named: ") {
            self = .invalid([FieldProblem(parameter: name, in: "query", detail: "is required")])
        } else {
            self.init(.malformedRequest, detail: "the request does not match the operation in /openapi.json")
        }
    }

    private static func quotedName(in text: String) -> String? {
        guard let open = text.firstIndex(of: "'"), let close = text[text.index(after: open)...].firstIndex(of: "'")
        else { return nil }
        return String(text[text.index(after: open)..<close])
    }

    private static func namedParameter(in text: String, after marker: String) -> String? {
        guard let range = text.range(of: marker) else { return nil }
        return String(text[range.upperBound...]).trimmingCharacters(in: .whitespaces)
    }

    init(decoding error: DecodingError) {
        func pointer(_ path: [any CodingKey]) -> String {
            path.isEmpty ? "" : "/" + path.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: "/")
        }
        switch error {
        case .dataCorrupted(let context) where context.codingPath.isEmpty && context.underlyingError != nil:
            self.init(.malformedRequest, detail: "the body is not valid JSON")
        case .dataCorrupted(let context) where context.codingPath.isEmpty:
            self.init(.invalidRequest, detail: Self.fieldText(context.debugDescription))
        case .dataCorrupted(let context):
            self = .invalid([
                FieldProblem(pointer: pointer(context.codingPath), detail: Self.fieldText(context.debugDescription))
            ])
        case .keyNotFound(let key, let context):
            let path = pointer(context.codingPath + [key])
            self.init(
                .invalidRequest,
                detail: "\(path) is required",
                errors: [FieldProblem(pointer: path, detail: "is required")]
            )
        case .typeMismatch(let type, let context):
            let path = pointer(context.codingPath)
            let expected = Self.typeName(type)
            self.init(
                .invalidRequest,
                detail: "\(path) must be \(expected)",
                errors: [FieldProblem(pointer: path, detail: "must be \(expected)")]
            )
        case .valueNotFound(let type, let context):
            let path = pointer(context.codingPath)
            self.init(
                .invalidRequest,
                detail: "\(path) must be \(Self.typeName(type)), not null",
                errors: [FieldProblem(pointer: path, detail: "must be \(Self.typeName(type)), not null")]
            )
        @unknown default:
            self.init(.malformedRequest, detail: "the body does not match the operation's schema")
        }
    }

    init(http error: HTTPError) {
        switch error.status {
        case .notFound: self.init(.notFound, detail: "no such route: see /openapi.json")
        case .methodNotAllowed:
            self.init(.methodNotAllowed, detail: "the route does not take this method: see /openapi.json")
        case .contentTooLarge: self.init(.bodyTooLarge, detail: error.body ?? "the request body is too large")
        case .unauthorized: self.init(.unauthorized, detail: error.body)
        default:
            self.init(.malformedRequest, detail: error.body ?? error.status.reasonPhrase)
            status = error.status.code
        }
    }

    private static func typeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Int.Type, is Int64.Type, is Int32.Type: "an integer"
        case is Double.Type, is Float.Type: "a number"
        case is Bool.Type: "true or false"
        case is Date.Type: "an RFC 3339 date-time with a zone"
        default:
            String(describing: type).contains("Array") ? "an array" : "an object"
        }
    }

    /// The generated decoders' messages, phrased for the field they are about, without the
    /// names of the server's own types (`OpenAPIValueContainer`, `Components.Schemas.…`).
    static func fieldText(_ debugDescription: String) -> String {
        if debugDescription.contains("additional properties") || debugDescription.contains("Unexpected") {
            let names = debugDescription.components(separatedBy: "\"").enumerated().filter { $0.offset % 2 == 1 }.map(
                \.element
            )
            return names.isEmpty
                ? "carries fields the schema does not have" : "unknown field(s): " + names.joined(separator: ", ")
        }
        if debugDescription.contains("invalid String value") || debugDescription.contains("Cannot initialize") {
            return "is not one of the values the schema lists (see /openapi.json)"
        }
        if debugDescription.contains("OpenAPI") || debugDescription.contains("Components.")
            || debugDescription.contains("Operations.")
            || debugDescription.contains("Container") || debugDescription.contains("Swift.")
        {
            return "does not have the form the schema gives it (see /openapi.json)"
        }
        return debugDescription
    }
}

extension Problem.FieldProblem {
    /// An engine's field error: a JSON Pointer into the body (`/plannedStart`), or the bare name
    /// of a parameter (`eventKey`, `token` in the path; `Idempotency-Key`, a header).
    init(_ field: FieldError) {
        if field.pointer.isEmpty || field.pointer.hasPrefix("/") {
            self.init(pointer: field.pointer, detail: field.detail)
        } else {
            self.init(
                parameter: field.pointer,
                in: field.pointer.contains("-") ? "header" : "path",
                detail: field.detail
            )
        }
    }
}
