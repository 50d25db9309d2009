import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import Synchronization

/// Hummingbird's HTTP/1 channel with a guard in front: each connection's idle, header and body
/// deadlines (`ConnectionGuardHandler`), answers that close their connection
/// (`HTTPExchangeObserver`), and a cap on the connections this replica keeps open. Channel-ID
/// reads whose answers are in memory and devices' token registrations are answered before
/// Hummingbird (`EventLoopAnswerHandler`).
struct GuardedHTTP1Channel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value

    let responder: HTTPChannelHandler.Responder
    let limits: ConnectionLimits
    let connections: OpenConnections
    let eventLoopAnswers: EventLoopAnswers?
    let logger: Logger

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let admitted = connections.open()
        let connections = self.connections
        channel.closeFuture.whenComplete { _ in connections.close() }
        let guardHandler = ConnectionGuardHandler(limits: limits, admitted: admitted, logger: self.logger)
        let answers = eventLoopAnswers
        let base = HTTP1Channel(
            responder: responder,
            configuration: .init(additionalChannelHandlers: answers.map { [EventLoopAnswerHandler($0)] } ?? [])
        )
        // Called on the channel's event loop: the pipeline is changed synchronously.
        do {
            try channel.pipeline.syncOperations.addHandler(guardHandler, position: .first)
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        let boundGuard = NIOLoopBound(guardHandler, eventLoop: channel.eventLoop)
        return base.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let operations = channel.pipeline.syncOperations
            let decoder = try operations.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            try operations.addHandler(HTTPExchangeObserver(guard: boundGuard.value), position: .after(decoder))
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await HTTP1Channel(responder: responder).handle(value: value, logger: logger)
    }
}

/// The connections one replica has open, against its cap.
final class OpenConnections: Sendable {
    let maximum: Int
    private let count = Atomic<Int>(0)

    init(maximum: Int) {
        self.maximum = maximum
    }

    /// Counts a new connection; whether it is within the cap.
    func open() -> Bool {
        count.wrappingAdd(1, ordering: .relaxed).newValue <= maximum
    }

    func close() {
        count.wrappingSubtract(1, ordering: .relaxed)
    }

    var current: Int { count.load(ordering: .relaxed) }
}

extension HTTPServerBuilder {
    /// HTTP/1 behind `GuardedHTTP1Channel`.
    static func guardedHTTP1(
        limits: ConnectionLimits,
        eventLoopAnswers: EventLoopAnswers?,
        logger: Logger
    ) -> HTTPServerBuilder {
        let connections = OpenConnections(maximum: limits.maximumConnections)
        return HTTPServerBuilder { responder in
            GuardedHTTP1Channel(
                responder: responder,
                limits: limits,
                connections: connections,
                eventLoopAnswers: eventLoopAnswers,
                logger: logger
            )
        }
    }
}
