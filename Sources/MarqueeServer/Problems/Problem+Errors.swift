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
        case let error as ServerError:
            self.init(openAPI: error)
        case let error as HTTPError:
            self.init(http: error)
        case let error as DecodingError:
            self.init(decoding: error)
        default:
            self.init(.internalError, detail: "the request failed unexpectedly; the server log has the details under this request ID")
        }
    }

    init(engine error: EngineError) {
        switch error {
        case .notFound(let resource, let id):
            self.init(.notFound, detail: "\(resource) \(id) not found")
        case .invalidInput(let fields):
            self.init(
                .invalidRequest,
                detail: fields.count == 1 ? "\(fields[0].pointer): \(fields[0].detail)" : "\(fields.count) fields are invalid",
                errors: fields.map { FieldProblem(pointer: $0.pointer, detail: $0.detail) }
            )
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
        }
    }

    init(store error: StoreError) {
        switch error {
        case .notFound(let entity, let id): self.init(.notFound, detail: "\(entity) \(id) not found")
        case .duplicate: self.init(.duplicate, detail: error.description)
        case .invalidTransition, .notActive: self.init(.eventConflict, detail: error.description)
        case .leaseLost, .corruptRow: self.init(.internalError, detail: "the store refused the operation; the server log has the details")
        }
    }

    /// What the generated server code throws: the handler's own error wrapped, or a request that
    /// does not match the document (a runtime error of the generated code).
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
            self.init(.malformedRequest, detail: "the request needs a JSON body matching the operation's schema: \(text)")
        } else {
            self.init(.invalidRequest, detail: text)
        }
    }

    init(decoding error: DecodingError) {
        func pointer(_ path: [any CodingKey]) -> String {
            path.isEmpty ? "" : "/" + path.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: "/")
        }
        switch error {
        case .dataCorrupted(let context) where context.codingPath.isEmpty:
            self.init(.malformedRequest, detail: "the body is not valid JSON")
        case .dataCorrupted(let context):
            self.init(
                .invalidRequest,
                detail: context.debugDescription,
                errors: [FieldProblem(pointer: pointer(context.codingPath), detail: Self.fieldText(context.debugDescription))]
            )
        case .keyNotFound(let key, let context):
            let path = pointer(context.codingPath + [key])
            self.init(.invalidRequest, detail: "\(path) is required", errors: [FieldProblem(pointer: path, detail: "is required")])
        case .typeMismatch(let type, let context):
            let path = pointer(context.codingPath)
            let expected = Self.typeName(type)
            self.init(.invalidRequest, detail: "\(path) must be \(expected)", errors: [FieldProblem(pointer: path, detail: "must be \(expected)")])
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
        case .methodNotAllowed: self.init(.methodNotAllowed, detail: "the route does not take this method: see /openapi.json")
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

    /// The generated decoders' messages, phrased for the field they are about.
    private static func fieldText(_ debugDescription: String) -> String {
        if debugDescription.contains("additional properties") || debugDescription.contains("Unexpected") {
            return "unknown field(s): \(debugDescription)"
        }
        return debugDescription
    }
}
