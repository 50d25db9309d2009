import NIOCore
import NIOHTTP1

/// Sits right after the HTTP/1 decoder and tells the connection's guard where each request and
/// answer stands (headers read, body read, answer written). An answer that says
/// `Connection: close` closes the connection once written, whatever is left of the request: the
/// API says so when it refuses a request before reading its body (401, 413, 429), so that no byte
/// of a body it will not use is read.
final class HTTPExchangeObserver: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let guardHandler: ConnectionGuardHandler
    private var closeAfterAnswer = false

    init(guard guardHandler: ConnectionGuardHandler) {
        self.guardHandler = guardHandler
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head: guardHandler.headRead()
        case .body: break
        case .end: guardHandler.endRead()
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let head):
            if head.headers[canonicalForm: "connection"].contains(where: { $0.lowercased() == "close" }) {
                closeAfterAnswer = true
            }
            context.write(data, promise: promise)
        case .body:
            context.write(data, promise: promise)
        case .end:
            guardHandler.answerEnded()
            guard closeAfterAnswer else {
                context.write(data, promise: promise)
                return
            }
            context.writeAndFlush(data, promise: promise)
            context.close(promise: nil)
        }
    }
}
