import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Answers the two requests every follower's device makes at kick-off where they are read, on the
/// connection's event loop, between HTTP/1 decoding and Hummingbird: a channel-ID read whose answer
/// is in memory (`ChannelReadAnswer`), and a device's token registration whose key is remembered
/// and whose body the contract admits (`TokenRegistrationAnswer`, answered once the store has
/// written it). Such a request costs its own work, not the hops of a request through Hummingbird's
/// middleware chain and Swift's pool. Every other request goes on to Hummingbird untouched, and
/// answers leave in the order their requests came (`StateMachine`).
final class EventLoopAnswerHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let channelReads: ChannelReadAnswer
    private let registrations: TokenRegistrationAnswer
    private var state = StateMachine()
    /// The body of the request held for an answer here.
    private var heldBody: ByteBuffer?
    /// The key this connection's client last presented, hashed once for the requests that present it.
    private var keys = LastPresentedKey()

    init(_ answers: EventLoopAnswers) {
        self.channelReads = answers.channelReads
        self.registrations = answers.registrations
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        handle(unwrapInboundIn(data), context: context)
    }

    private func handle(_ part: HTTPRequestPart, context: ChannelHandlerContext) {
        switch part {
        case .head(let request):
            switch state.head(request, kind: kind(of: request)) {
            case .hold: heldBody = nil
            case .pass: context.fireChannelRead(wrapInboundOut(part))
            case .wait: return
            }
        case .body(var bytes):
            switch state.body(bytes) {
            case .pass:
                context.fireChannelRead(wrapInboundOut(part))
            case .keep:
                if heldBody == nil { heldBody = context.channel.allocator.buffer(capacity: bytes.readableBytes) }
                heldBody?.writeBuffer(&bytes)
            case .passHeld(let head):
                context.fireChannelRead(wrapInboundOut(.head(head)))
                if let kept = heldBody.take() { context.fireChannelRead(wrapInboundOut(.body(kept))) }
                context.fireChannelRead(wrapInboundOut(part))
            case .wait:
                return
            }
        case .end(let trailers):
            switch state.end(trailers) {
            case .pass:
                context.fireChannelRead(wrapInboundOut(part))
            case .wait:
                return
            case .answer(let request, .withoutBody):
                guard let answer = channelReads.answer(request, from: context.channel.remoteAddress, keys: &keys) else {
                    passOnWhole(request, trailers: trailers, context: context)
                    return
                }
                state.answered()
                write(answer.head, answer.body, context: context)
            case .answer(let request, .withBody):
                let body = heldBody.take() ?? ByteBuffer()
                guard
                    let admitted = registrations.admit(
                        request,
                        body: body,
                        from: context.channel.remoteAddress,
                        keys: &keys
                    )
                else {
                    heldBody = body
                    passOnWhole(request, trailers: trailers, context: context)
                    return
                }
                state.answering()
                let registrations = registrations
                let promise = context.eventLoop.makePromise(of: TokenRegistrationAnswer.Answer.self)
                promise.completeWithTask { await registrations.answer(admitted) }
                let bound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
                promise.futureResult.whenSuccess { answer in
                    let (handler, context) = bound.value
                    handler.write(answer.head, answer.body, context: context)
                    handler.resume(context: context)
                }
            }
        }
    }

    /// What the head alone allows answering here.
    private func kind(of request: HTTPRequest) -> StateMachine.Kind? {
        if ChannelReadAnswer.mayAnswer(request) { return .withoutBody }
        if TokenRegistrationAnswer.mayAnswer(request) { return .withBody(bodyLimit: registrations.bodyLimit) }
        return nil
    }

    private func passOnWhole(_ request: HTTPRequest, trailers: HTTPFields?, context: ChannelHandlerContext) {
        state.passedOn()
        context.fireChannelRead(wrapInboundOut(.head(request)))
        if let kept = heldBody.take() { context.fireChannelRead(wrapInboundOut(.body(kept))) }
        context.fireChannelRead(wrapInboundOut(.end(trailers)))
    }

    private func write(_ head: HTTPResponse, _ body: ByteBuffer?, context: ChannelHandlerContext) {
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if let body { context.write(wrapOutboundOut(.body(body)), promise: nil) }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }

    /// After an answer made here is written: the parts that waited are handled in order, then the
    /// quiesce and the read that waited go on.
    private func resume(context: ChannelHandlerContext) {
        let resumption = state.answerWritten()
        guard context.channel.isActive else { return }
        for part in resumption.waiting { handle(part, context: context) }
        if resumption.passQuiesce {
            userInboundEventTriggered(context: context, event: ChannelShouldQuiesceEvent())
        }
        if resumption.read { context.read() }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { state.passedOnAnswerWritten() }
        context.write(data, promise: promise)
    }

    func read(context: ChannelHandlerContext) {
        if state.read() { context.read() }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard event is ChannelShouldQuiesceEvent else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        switch state.quiesce() {
        case .hold:
            return
        case .pass(let heldHead):
            if let heldHead {
                context.fireChannelRead(wrapInboundOut(.head(heldHead)))
                if let kept = heldBody.take() { context.fireChannelRead(wrapInboundOut(.body(kept))) }
            }
            context.fireUserInboundEventTriggered(event)
        }
    }
}

/// What `EventLoopAnswerHandler` answers, made once per replica.
struct EventLoopAnswers: Sendable {
    var channelReads: ChannelReadAnswer
    var registrations: TokenRegistrationAnswer
}

extension Optional {
    /// The value, leaving nil in its place.
    fileprivate mutating func take() -> Wrapped? {
        defer { self = nil }
        return self
    }
}
