import AsyncHTTPClient
import NIOCore

extension HTTPClient {
    /// The HTTP client every `MarqueeClient` uses unless given a transport: one per process and
    /// never shut down, like `HTTPClient.shared`, but configured for a command line. The shared
    /// client waits up to 90 s and retries refused connections until then; a person or a script
    /// asking an unreachable server wants to know at once. No read timeout: a job's event stream
    /// may be quiet for a while.
    static let marquee: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.timeout = .init(connect: .seconds(10), read: nil)
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()
}
