/// A batch the pool pulls requests from lazily, on its event loop.
protocol APNSRequestSource: AnyObject {
    /// Whether it has nothing to give right now (window full, or its consumer is behind).
    var isPaused: Bool { get }
    func nextRequest() -> APNSRequestSourceStep
    /// The pool gave up (no connection could be made): fail everything not yet sent.
    func fail(with error: APNSError)
    /// The pool was already shut down when the batch arrived.
    func poolShutDown()
}

enum APNSRequestSourceStep {
    case request(APNSQueuedRequest)
    case paused
    case exhausted
}
