/// The deadline of one HTTP/1 connection, as its requests and answers come and go: idle between
/// requests, reading a request's headers, reading its body, or answering (no deadline: an answer,
/// an event stream among them, takes as long as it takes). Kept apart from the channel handlers
/// that feed it, so that it can be tested without sockets or time.
struct ConnectionDeadlines<Instant: InstantProtocol> where Instant.Duration == Duration {
    enum Phase: Equatable {
        case idle
        case readingHead
        case readingBody
        case answering
    }

    /// Why a connection was closed by its deadline.
    enum Expiry: String, Equatable {
        case idle
        case headers
        case body
    }

    let limits: ConnectionLimits
    private(set) var phase: Phase = .idle
    /// When the connection is closed unless something moves it on; `nil` while answering.
    private(set) var deadline: Instant?
    /// The answer to the request being read went out before its body was read (a refusal).
    private var answeredEarly = false

    init(limits: ConnectionLimits, now: Instant) {
        self.limits = limits
        deadline = now.advanced(by: limits.idleTimeout)
    }

    /// Bytes arrived: an idle connection starts a request, whose headers now have their time.
    mutating func bytesRead(now: Instant) {
        guard phase == .idle else { return }
        phase = .readingHead
        deadline = now.advanced(by: limits.headerTimeout)
    }

    /// A request's headers were read: its body now has its time.
    mutating func headRead(now: Instant) {
        phase = .readingBody
        answeredEarly = false
        deadline = now.advanced(by: limits.bodyTimeout)
    }

    /// A request was read to its end.
    mutating func endRead(now: Instant) {
        if answeredEarly {
            becomeIdle(now: now)
        } else {
            phase = .answering
            deadline = nil
        }
    }

    /// An answer was written to its end.
    mutating func answerEnded(now: Instant) {
        switch phase {
        case .answering:
            becomeIdle(now: now)
        case .readingBody:
            // Answered before its body was read: what is left of the body is read (and dropped)
            // within the body's time, or the connection closes.
            answeredEarly = true
        case .idle, .readingHead:
            break
        }
    }

    /// Whether the deadline has passed, and which.
    func expiry(now: Instant) -> Expiry? {
        guard let deadline, now >= deadline else { return nil }
        switch phase {
        case .idle: return .idle
        case .readingHead: return .headers
        case .readingBody: return .body
        case .answering: return nil
        }
    }

    private mutating func becomeIdle(now: Instant) {
        phase = .idle
        answeredEarly = false
        deadline = now.advanced(by: limits.idleTimeout)
    }
}
