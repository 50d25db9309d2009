import HTTPTypes
import Hummingbird
import MarqueeCore
import NIOCore

extension HTTPFields {
    /// Whether the generated routes would read this request's `Accept` as it is: none, or one that
    /// takes JSON plainly (they refuse others, or parse lists). The answers served without them
    /// (`ChannelReadAnswer`, `ChannelReadMiddleware`, `TokenRegistrationMiddleware`) take only such
    /// requests.
    var acceptsJSONPlainly: Bool {
        guard let accept = self[.accept] else { return true }
        return accept == "*/*" || accept == "application/json"
    }

    /// Whether the body is declared as JSON in the one form every client sends, which the
    /// generated routes decode as JSON: `application/json`, with or without `charset=utf-8`.
    var hasPlainJSONBody: Bool {
        guard let contentType = self[.contentType] else { return false }
        return contentType.utf8.count <= 31
            && ["application/json", "application/json; charset=utf-8"].contains(contentType.lowercased())
    }

    /// Whether the client asks for the connection to close after the answer: Hummingbird's part,
    /// so the answers written on the event loop leave such a request to it.
    var asksToClose: Bool {
        self[values: .connection].contains { $0.lowercased().contains("close") }
    }

    /// Whether the request said it has a body.
    var announcesBody: Bool {
        if let length = self[.contentLength].flatMap(Int.init) { return length > 0 }
        return self[.transferEncoding] != nil
    }
}

extension Request {
    var acceptsJSONPlainly: Bool { headers.acceptsJSONPlainly }
    var hasPlainJSONBody: Bool { headers.hasPlainJSONBody }

    /// The caller's own app when this is a plain JSON `method` request to `template` (the route
    /// `endpointPath` names) with an app's key that has the role: what the middlewares answering
    /// without the generated route take; nil for them to leave the request to it.
    func plainAppRequest(_ method: HTTPRequest.Method, to template: String, endpointPath: String?) -> App? {
        guard self.method == method, endpointPath == template, hasPlainJSONBody, acceptsJSONPlainly else {
            return nil
        }
        return RequestScope.current?.app(allowing: .app)
    }
}

extension Response {
    /// A 200 with `json` as the generated routes write their JSON answers' heads.
    static func generatedRouteJSON(_ json: some Sequence<UInt8>) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json; charset=utf-8"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: json)))
    }
}

extension JSONParser {
    /// The JSON value of a request's collected body; nil when it is not JSON.
    static func value(of body: ByteBuffer) -> JSONValue? {
        try? body.withUnsafeReadableBytes { bytes in try JSONParser.parse(bytes) }
    }
}
