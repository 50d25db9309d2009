import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The transport apps use: Foundation's URLSession (FoundationNetworking on Linux).
public struct URLSessionTransport: MarqueeTransport {
    private let session: URLSession
    private let timeout: Duration

    /// - Parameter session: by default one ephemeral session for the whole process (MarqueeKit keeps
    ///   no cookies or cache), made once and never released. A session per transport would be torn
    ///   down whenever a transport goes, and on Linux FoundationNetworking's teardown races its own
    ///   socket sources (swift-corelibs-foundation #4791, #5469): a test process that made and dropped
    ///   sessions concurrently crashed in unrelated code with the heap corrupted.
    public init(session: URLSession = URLSessionTransport.sharedSession, timeout: Duration = .seconds(15)) {
        self.session = session
        self.timeout = timeout
    }

    /// The process-wide session of every transport made without one of its own.
    public static let sharedSession = URLSession(configuration: .ephemeral)

    public func send(_ request: MarqueeHTTPRequest) async throws -> MarqueeHTTPResponse {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method
        urlRequest.httpBody = request.body
        urlRequest.timeoutInterval = timeout.seconds
        for (name, value) in request.headers {
            urlRequest.setValue(value, forHTTPHeaderField: name)
        }
        let (body, response) = try await session.cancellableData(for: urlRequest)
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
