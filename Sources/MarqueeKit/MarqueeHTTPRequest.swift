import Foundation

/// One request to Marquee, complete: what a transport sends as it is.
public struct MarqueeHTTPRequest: Sendable, Equatable {
    public var method: String
    /// The API's path as built (`/v1/push-to-start-tokens/8f2a…`), percent-encoded.
    public var path: String
    /// `path` under the configured base URL.
    public var url: URL
    /// Header names as sent; `Authorization` carries the app key.
    public var headers: [String: String]
    public var body: Data?

    public init(method: String, path: String, url: URL, headers: [String: String], body: Data?) {
        self.method = method
        self.path = path
        self.url = url
        self.headers = headers
        self.body = body
    }
}
