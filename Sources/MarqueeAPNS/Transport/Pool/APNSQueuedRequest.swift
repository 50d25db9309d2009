/// A request waiting for, or occupying, a stream. Lives on the pool's event loop only.
struct APNSQueuedRequest {
    var operation: APNSOperation
    /// Who hears the outcome.
    let sink: any APNSResponseSink
    /// The sink's own number for the request (a batch's index).
    let tag: Int
    /// 1 for the first try; retries after `retryLater` outcomes and lost connections add one.
    var attempt = 1
    /// Set once the provider token was renewed for this request, which happens at most once.
    var renewedToken = false
    /// Why an earlier attempt was left uncertain (written, never answered), if one was: then the
    /// request may already have been delivered, and it never ends as merely "not sent".
    var uncertainty: String?
}

/// Receives outcomes on the pool's event loop. Sinks buffer and deliver in `flushOutcomes`, which the
/// pool calls once per read cycle, so that a burst of completions reaches callers as one chunk.
protocol APNSResponseSink: AnyObject {
    /// A caller that stopped listening: its queued requests are dropped instead of sent.
    var isCancelled: Bool { get }
    func requestCompleted(tag: Int, operation: APNSOperation, result: Result<APNSResponse, APNSError>)
    func flushOutcomes()
}
