import Hummingbird
import NIOCore

/// Hummingbird's basic request context, plus the client's address (for the authentication
/// throttle).
struct MarqueeRequestContext: RequestContext, RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    let remoteAddress: SocketAddress?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}
