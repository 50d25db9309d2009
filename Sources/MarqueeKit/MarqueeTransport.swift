/// How MarqueeKit reaches Marquee: one request out, its answer back. `URLSessionTransport` in an
/// app; a test or the emulator's device model can put anything else in its place.
public protocol MarqueeTransport: Sendable {
    /// Sends `request` and returns the answer, whatever its status; throws only when no answer
    /// came (no connection, a timeout, a cancelled task).
    func send(_ request: MarqueeHTTPRequest) async throws -> MarqueeHTTPResponse
}
