import Foundation
import MarqueeKit

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A plain HTTP/1.1 client for tests, over real sockets: what a producer's curl would send.
public struct TestHTTPClient: Sendable {
    public let baseURL: String

    public struct Response: Sendable {
        public var status: Int
        public var headers: [String: String]
        public var body: Data

        /// The body as a JSON object (empty when it is not one).
        public var json: [String: Any] {
            (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:]
        }

        public var text: String { String(decoding: body, as: UTF8.self) }

        /// A header, by case-insensitive name.
        public func header(_ name: String) -> String? {
            headers.first { $0.key.lowercased() == name.lowercased() }?.value
        }
    }

    public init(baseURL: String) {
        self.baseURL = baseURL
    }

    /// Sends a request; `json` is encoded with JSONSerialization, `body` is sent as it is.
    public func send(
        _ method: String,
        _ path: String,
        key: String? = nil,
        json: Any? = nil,
        body: Data? = nil,
        headers: [String: String] = [:]
    ) async throws -> Response {
        guard let url = URL(string: baseURL + path) else { throw TestSetupError("bad path \(path)") }
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.timeoutInterval = 300  // a whole suite on 2 loaded cores answers slowly, not wrongly
        if let key { request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization") }
        if let json {
            request.httpBody = try JSONSerialization.data(withJSONObject: json)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        } else if let body {
            request.httpBody = body
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await Self.session.cancellableData(for: request)
        guard let http = response as? HTTPURLResponse else { throw TestSetupError("not an HTTP response") }
        var fields: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { fields[name] = value }
        }
        return Response(status: http.statusCode, headers: fields, body: data)
    }

    private static let session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = 32
        configuration.urlCache = nil
        return URLSession(configuration: configuration)
    }()
}
