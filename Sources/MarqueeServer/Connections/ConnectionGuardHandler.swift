import Logging
import MarqueeCore
import NIOCore

/// The first handler of every API connection, before HTTP is decoded: keeps the connection's
/// deadline (`ConnectionDeadlines`) and closes it when it passes; a connection past the replica's
/// cap is answered 503 here, in a few bytes, and closed without reading anything.
///
/// Event-loop bound: every call comes on the channel's loop, which is why it needs no lock.
final class ConnectionGuardHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var deadlines: ConnectionDeadlines<ContinuousClock.Instant>
    private let admitted: Bool
    private let logger: Logger
    private var context: ChannelHandlerContext?
    private var timer: Scheduled<Void>?
    private var timerFiresAt: ContinuousClock.Instant?
    private var refused = false
    /// Within `channelRead`, which re-arms once the read has gone through.
    private var reading = false

    init(limits: ConnectionLimits, admitted: Bool, logger: Logger) {
        self.deadlines = ConnectionDeadlines(limits: limits, now: .now)
        self.admitted = admitted
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if context.channel.isActive { start(context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refused else { return }
        deadlines.bytesRead(now: .now)
        // The timer is set for where the read leaves the connection, not for each phase it passed
        // through: a request read whole in one read moves from idle through its headers and body
        // to its answer (or, answered at once, back to idle) before this returns, and re-arming at
        // each step cost a timer scheduled and cancelled per request.
        reading = true
        context.fireChannelRead(data)
        reading = false
        rearm()
    }

    // MARK: What the HTTP side reports (`HTTPExchangeObserver`)

    func headRead() {
        deadlines.headRead(now: .now)
        rearm()
    }

    func endRead() {
        deadlines.endRead(now: .now)
        rearm()
    }

    func answerEnded() {
        deadlines.answerEnded(now: .now)
        rearm()
    }

    // MARK: Deadline

    private func start(_ context: ChannelHandlerContext) {
        guard admitted else {
            refuse(context)
            return
        }
        deadlines = ConnectionDeadlines(limits: deadlines.limits, now: .now)
        rearm()
    }

    /// Schedules the check for the current deadline, unless one is due before it (that one
    /// re-arms for the deadline it then finds).
    private func rearm() {
        // Within a read, `channelRead` re-arms once the read has gone through.
        guard let context, !reading else { return }
        // No deadline while answering: a timer already set is left to fire and find none (it then
        // re-arms for the deadline it finds), cheaper than cancelling it now and scheduling
        // another when the answer ends.
        guard let deadline = deadlines.deadline else { return }
        if let firesAt = timerFiresAt, firesAt <= deadline, timer != nil { return }
        timer?.cancel()
        timerFiresAt = deadline
        let delay = max(deadline - .now, .zero)
        let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(in: .nanoseconds(Int64(delay.wholeNanoseconds))) {
            loopBound.value.deadlineCheck()
        }
    }

    private func deadlineCheck() {
        timer = nil
        timerFiresAt = nil
        guard let context else { return }
        if let expiry = deadlines.expiry(now: .now) {
            logger.debug(
                "connection closed: its \(expiry.rawValue) time ran out",
                metadata: ["connection.timeout": "\(expiry.rawValue)"]
            )
            context.close(promise: nil)
        } else {
            rearm()
        }
    }

    // MARK: Over the cap

    private func refuse(_ context: ChannelHandlerContext) {
        guard !refused else { return }
        refused = true
        logger.warning("connection refused: this replica has its most open connections (http.maxConnections)")
        let body =
            #"""
            {"detail":"this replica has as many open connections as it takes (http.maxConnections); retry \#
            shortly","status":503,"title":"Too many connections","type":"/problems/too-many-connections"}
            """#
        let head =
            """
            HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/problem+json\r\nRetry-After: \
            1\r\nConnection: close\r\nContent-Length: \(body.utf8.count)\r\n\r\n
            """
        let buffer = context.channel.allocator.buffer(string: head + body)
        // Written before the close, which sends it first: a few bytes, taken by the socket at once.
        context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
        context.close(promise: nil)
    }
}
