import AsyncHTTPClient
import Foundation
import HTTPTypes
import NIOCore
import OpenAPIAsyncHTTPClient
import OpenAPIRuntime

/// A client of a running Marquee server: its base URL and API key, the generated client of the
/// whole API (`api`, one method per operation of `openapi.yaml`), and `send`, which runs calls on
/// it and turns every failure into a `MarqueeClientError`.
///
/// ```swift
/// let marquee = MarqueeClient(serverURL: url, apiKey: key)
/// let app = try await marquee.send { try await $0.getApp(path: .init(appID: id)).ok.body.json }.value
/// ```
///
/// Responses stream: server-sent events arrive as the server sends them (the transport is
/// AsyncHTTPClient; Foundation's URLSession buffers whole bodies on Linux).
public struct MarqueeClient: Sendable {
    /// The server's base URL, e.g. `http://127.0.0.1:8080`.
    public let serverURL: URL
    /// The generated client, authenticated with the key.
    public let api: Client

    /// - Parameters:
    ///   - serverURL: The server's base URL; the API's paths (`/v1/...`) are appended to it.
    ///   - apiKey: The bearer key (`mq_…`); nil for the unauthenticated health routes only.
    ///   - transport: The HTTP transport; by default AsyncHTTPClient (`HTTPClient.marquee`).
    ///   - timeout: How long to wait for an answer's head (a stream's body may take longer).
    public init(
        serverURL: URL,
        apiKey: String?,
        transport: (any ClientTransport)? = nil,
        timeout: Duration = .seconds(120)
    ) {
        self.serverURL = serverURL
        let upstream =
            transport
            ?? AsyncHTTPClientTransport(
                configuration: .init(
                    client: .marquee,
                    timeout: .nanoseconds(Int64(timeout.components.seconds) * 1_000_000_000)
                )
            )
        self.api = Client(
            serverURL: serverURL,
            configuration: .init(dateTranscoder: RFC3339DateTranscoder()),
            transport: ReachabilityTransport(upstream: upstream),
            middlewares: [MarqueeClientMiddleware(apiKey: apiKey, maximumJSONBytes: 64 << 20)]
        )
    }

    /// A server URL from what a person typed: `http` or `https` with a host, any trailing slash
    /// dropped (the API's paths start with one). Nil when it is not one.
    public static func serverURL(_ text: String) -> URL? {
        var text = text.trimmingCharacters(in: .whitespaces)
        while text.hasSuffix("/") { text.removeLast() }
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = url.host, !host.isEmpty, url.query == nil, url.fragment == nil
        else { return nil }
        return url
    }

    /// Runs `operation` on the generated client and answers its value with the answer's status,
    /// request ID and raw JSON. Error answers, unreachable servers and answers the document does
    /// not describe all throw `MarqueeClientError`.
    public func send<Value: Sendable>(
        _ operation: @Sendable (Client) async throws -> Value
    ) async throws(MarqueeClientError) -> MarqueeResponse<Value> {
        let recorder = ResponseRecorder()
        do {
            let value = try await ResponseRecorder.$current.withValue(recorder) { try await operation(api) }
            let recording = recorder.recording
            return MarqueeResponse(
                value: value,
                status: recording?.status ?? 200,
                requestID: recording?.requestID,
                json: recording?.json
            )
        } catch {
            throw Self.clientError(error, recording: recorder.recording)
        }
    }

    /// The `MarqueeClientError` for whatever an operation threw.
    static func clientError(_ error: any Error, recording: ResponseRecorder.Recording?) -> MarqueeClientError {
        if let error = error as? MarqueeClientError { return error }
        if error is CancellationError { return MarqueeClientError(kind: .cancelled, title: "cancelled") }
        if let clientError = error as? ClientError {
            if let error = clientError.underlyingError as? MarqueeClientError { return error }
            if clientError.underlyingError is CancellationError {
                return MarqueeClientError(kind: .cancelled, title: "cancelled")
            }
            return MarqueeClientError(
                kind: .unexpectedResponse,
                status: clientError.response.map { $0.status.code },
                title: "unexpected answer to \(clientError.operationID)",
                detail: clientError.causeDescription + " " + String(describing: clientError.underlyingError),
                requestID: recording?.requestID
            )
        }
        // A documented answer other than the one the caller expected (`.ok` on a `.created`), or
        // a body of another content type.
        return MarqueeClientError(
            kind: .unexpectedResponse,
            status: recording?.status,
            title: "unexpected answer",
            detail: String(describing: error),
            requestID: recording?.requestID
        )
    }
}
