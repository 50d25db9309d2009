import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Answers the channel-ID read on the connection's event loop when its answer is in memory
/// (`ChannelReadAnswer`), between HTTP/1 decoding and Hummingbird: such a read costs a lookup, not
/// the hops of a request through Swift's pool and back. Every other request goes on to
/// Hummingbird untouched, and answers leave in the order their requests came (`StateMachine`).
final class ChannelReadAnswerHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let answers: ChannelReadAnswer
    private var state = StateMachine()

    init(answers: ChannelReadAnswer) {
        self.answers = answers
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let request):
            switch state.head(request, mayAnswer: ChannelReadAnswer.mayAnswer(request)) {
            case .hold: return
            case .pass: context.fireChannelRead(data)
            }
        case .body:
            if case .passHeldHead(let head) = state.body() {
                context.fireChannelRead(wrapInboundOut(.head(head)))
            }
            context.fireChannelRead(data)
        case .end:
            guard case .answer(let request) = state.end() else {
                context.fireChannelRead(data)
                return
            }
            guard let answer = answers.answer(request, from: context.channel.remoteAddress) else {
                state.passedOn()
                context.fireChannelRead(wrapInboundOut(.head(request)))
                context.fireChannelRead(data)
                return
            }
            state.answered()
            context.write(wrapOutboundOut(.head(answer.head)), promise: nil)
            if let body = answer.body { context.write(wrapOutboundOut(.body(body)), promise: nil) }
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { state.answerWritten() }
        context.write(data, promise: promise)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent, let head = state.quiesce() {
            context.fireChannelRead(wrapInboundOut(.head(head)))
        }
        context.fireUserInboundEventTriggered(event)
    }
}
