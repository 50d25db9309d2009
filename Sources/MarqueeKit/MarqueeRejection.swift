import Foundation

/// Marquee's refusal of a request: its status, the problem document when it sent one, and when
/// it asked to be tried again.
public struct MarqueeRejection: Sendable, Equatable, CustomStringConvertible {
    public var status: Int
    /// Nil when the body was no problem document (a proxy's error page).
    public var problem: MarqueeProblem?
    /// `Retry-After`, when the answer carried one (429, 503).
    public var retryAfter: RetryAfter?

    public init(status: Int, problem: MarqueeProblem? = nil, retryAfter: RetryAfter? = nil) {
        self.status = status
        self.problem = problem
        self.retryAfter = retryAfter
    }

    /// Reads an answer that is not a success (a transport of the app's own, or the emulator's
    /// played app, turns Marquee's refusals into the same values `RetryPolicy` decides on).
    public init(_ response: MarqueeHTTPResponse) {
        self.status = response.status
        self.problem = try? JSONDecoder().decode(MarqueeProblem.self, from: response.body)
        self.retryAfter = response.header("Retry-After").flatMap(RetryAfter.init(header:))
    }

    public var description: String {
        guard let problem else { return "Marquee answered \(status)" }
        var text = "Marquee answered \(status) \(problem.type): \(problem.detail ?? problem.title)"
        if let instance = problem.instance { text += " (request \(instance))" }
        return text
    }
}
