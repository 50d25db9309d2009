import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The transport apps use: Foundation's URLSession (FoundationNetworking on Linux).
public struct URLSessionTransport: MarqueeTransport {
    private let session: URLSession
    private let timeout: Duration

    /// - Parameter session: an ephemeral session by default: MarqueeKit keeps no cookies or cache.
    public init(session: URLSession = URLSession(configuration: .ephemeral), timeout: Duration = .seconds(15)) {
        self.session = session
        self.timeout = timeout
    }

    public func send(_ request: MarqueeHTTPRequest) async throws -> MarqueeHTTPResponse {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method
        urlRequest.httpBody = request.body
        urlRequest.timeoutInterval = timeout.seconds
        for (name, value) in request.headers {
            urlRequest.setValue(value, forHTTPHeaderField: name)
        }
        let (body, response) = try await session.data(for: urlRequest)
        guard let http = response as? HTTPURLResponse else {
            throw URLError(.badServerResponse)
        }
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name] = value }
        }
        return MarqueeHTTPResponse(status: http.statusCode, headers: headers, body: body)
    }
}
