import CoreMetrics
import HTTPTypes
import MarqueeCore
import Synchronization

/// The HTTP metrics (`HTTPMetricsMiddleware` records them), their handlers made once per method,
/// route and status and then reused: a request does one locked lookup, no registry work.
final class HTTPMetrics: Sendable {
    private struct Key: Hashable {
        var method: String
        var route: String
        var status: Int
    }

    private struct Series {
        var counter: Counter
        var timer: CoreMetrics.Timer
    }

    static let requests = "marquee_http_requests_total"
    static let duration = "marquee_http_request_duration_seconds"
    /// The route of requests no route matches.
    static let unmatched = "unmatched"
    /// Methods counted by name; any other is `other`, so that made-up methods mint no series.
    static let knownMethods: Set<HTTPRequest.Method> = [.get, .head, .post, .put, .patch, .delete, .options]

    private let factory: any MetricsFactory
    private let series = Mutex<[Key: Series]>([:])

    init(factory: any MetricsFactory) {
        self.factory = factory
    }

    func record(method: HTTPRequest.Method, route: String, status: Int, since started: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - started
        let method = Self.knownMethods.contains(method) ? method.rawValue : "other"
        let key = Key(method: method, route: route, status: status)
        let handlers = series.withLock { series in
            if let handlers = series[key] { return handlers }
            let handlers = Series(
                counter: Counter(
                    label: Self.requests,
                    dimensions: [("method", method), ("route", route), ("status", String(status))],
                    factory: factory
                ),
                timer: CoreMetrics.Timer(
                    label: Self.duration,
                    dimensions: [("method", method), ("route", route)],
                    factory: factory
                )
            )
            series[key] = handlers
            return handlers
        }
        handlers.counter.increment()
        handlers.timer.recordNanoseconds(elapsed.wholeNanoseconds)
    }
}
