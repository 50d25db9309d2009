import Foundation
import HTTPTypes
import OpenAPIRuntime

/// Every request of a `MarqueeClient` goes through here: the bearer key and a request ID go on,
/// error answers come back as a typed `MarqueeClientError` (so the generated code never has to
/// decode a problem document per operation), and JSON answers are recorded for `--json`.
struct MarqueeClientMiddleware: ClientMiddleware {
    /// The API key. Only ever written into the `Authorization` header: never logged, never part
    /// of an error.
    let apiKey: String?
    /// The most a JSON answer is read into memory (list pages are far smaller).
    let maximumJSONBytes: Int

    func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        baseURL: URL,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        if let apiKey { request.headerFields[.authorization] = "Bearer \(apiKey)" }
        // Our own ID, so that even an answer from a proxy that drops the header can be matched
        // with the server's logs; the server echoes it.
        let sentRequestID = request.headerFields[.requestID] ?? Self.makeRequestID()
        request.headerFields[.requestID] = sentRequestID

        let (response, responseBody) = try await next(request, body, baseURL)
        let requestID = response.headerFields[.requestID] ?? sentRequestID
        let status = response.status.code

        if status >= 400 {
            var bytes: Data?
            if let responseBody { bytes = try await Data(collecting: responseBody, upTo: maximumJSONBytes) }
            throw Self.error(
                status: status,
                reasonPhrase: response.status.reasonPhrase,
                body: bytes,
                requestID: requestID
            )
        }
        guard let responseBody, Self.isJSON(response.headerFields[.contentType]) else {
            ResponseRecorder.current?.record(.init(status: status, requestID: requestID, json: nil))
            return (response, responseBody)
        }
        let bytes = try await Data(collecting: responseBody, upTo: maximumJSONBytes)
        ResponseRecorder.current?.record(.init(status: status, requestID: requestID, json: bytes))
        return (response, HTTPBody(bytes))
    }

    static func isJSON(_ contentType: String?) -> Bool {
        guard
            let mediaType = contentType?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
        else {
            return false
        }
        return mediaType == "application/json" || mediaType.hasSuffix("+json")
    }

    static func makeRequestID() -> String {
        "mqc-" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(20).lowercased()
    }

    /// The error for an answer with an error status: its problem document when it has one, else
    /// what can be said from the status and the start of the body.
    static func error(status: Int, reasonPhrase: String, body: Data?, requestID: String) -> MarqueeClientError {
        if let body, let problem = try? JSONDecoder().decode(ProblemDocument.self, from: body),
            problem.title != nil || problem.type != nil
        {
            return MarqueeClientError(
                kind: .problem,
                status: status,
                problemType: problem.type,
                title: problem.title ?? "HTTP \(status) \(reasonPhrase)",
                detail: problem.detail,
                fieldErrors: (problem.errors ?? []).map {
                    .init(pointer: $0.pointer ?? $0.name ?? "", detail: $0.detail ?? "")
                },
                apnsReason: problem.apnsReason,
                requestID: problem.instance ?? requestID
            )
        }
        let text = body.map {
            String(decoding: $0.prefix(300), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        return MarqueeClientError(
            kind: .problem,
            status: status,
            title: "HTTP \(status) \(reasonPhrase)",
            detail: text?.isEmpty == false ? text : nil,
            requestID: requestID
        )
    }
}

/// The fields of an RFC 9457 problem document Marquee sends; every one optional, so that a
/// proxy's or an older server's problem still decodes.
private struct ProblemDocument: Decodable {
    struct FieldError: Decodable {
        var pointer: String?
        /// A parameter's name (with `in`), when the field is no body member.
        var name: String?
        var detail: String?
    }

    var type: String?
    var title: String?
    var status: Int?
    var detail: String?
    var instance: String?
    var apnsReason: String?
    var errors: [FieldError]?
}

extension HTTPField.Name {
    static let requestID = HTTPField.Name("X-Request-ID")!
}
