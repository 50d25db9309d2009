import HTTPTypes
import Logging
import MarqueeCore
import NIOCore

/// What the middleware chain and Hummingbird do to every answer, done for one written on the event
/// loop (`ChannelReadAnswer`, `TokenRegistrationAnswer`): its length, the request's ID, `Date` and
/// `Server`; the count and time in `HTTPMetrics`; the debug line `RequestIDMiddleware` writes.
struct EventLoopAnswerChain: Sendable {
    let metrics: HTTPMetrics
    let serverName: String
    let date: HTTPDateHeader
    let logger: Logger

    /// The server's logger with the request's own metadata, as the chain puts it on every line.
    func logger(_ metadata: Logger.Metadata) -> Logger {
        var logger = logger
        for (key, value) in metadata { logger[metadataKey: key] = value }
        return logger
    }

    /// Finishes `head` as the chain would, then counts and logs the answer to `method` on `route`.
    /// `metadata` (the request's, `request.id` among it) is made only for a line that is written.
    func finish(
        _ head: inout HTTPResponse,
        body: ByteBuffer?,
        requestID: String,
        method: HTTPRequest.Method,
        route: String,
        path: String,
        started: ContinuousClock.Instant,
        metadata: @autoclosure () -> Logger.Metadata
    ) {
        if let body { head.headerFields[.contentLength] = String(body.readableBytes) }
        head.headerFields[.requestID] = requestID
        head.headerFields[.date] = date.value
        head.headerFields[.server] = serverName
        metrics.record(method: method, route: route, status: head.status.code, since: started)
        guard logger.logLevel <= .debug else { return }
        logger(metadata()).debug(
            "request",
            metadata: [
                "http.method": "\(method)",
                "http.path": "\(PushTokenRedaction.redactingTokens(inPath: path))",
                "http.status": "\(head.status.code)",
                "duration_ms": "\((ContinuousClock.now - started).wholeMilliseconds)",
                "http.answered": "on the event loop",
            ]
        )
    }
}
