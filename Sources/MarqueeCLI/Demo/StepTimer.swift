import Foundation
import MarqueeCore

/// Times the demo's steps and tells whoever listens about each one as it completes, so that the
/// table grows while the match is told rather than appearing at the end.
struct StepTimer {
    /// One completed step: what it was, what happened, how long it took.
    struct Step: Sendable, Hashable {
        var name: String
        var detail: String
        var duration: Duration

        var seconds: Double { duration.timeInterval }
    }

    private(set) var steps: [Step] = []
    private let clock = ContinuousClock()
    private let started: ContinuousClock.Instant
    private let onStep: (Step) -> Void

    init(onStep: @escaping (Step) -> Void) {
        self.onStep = onStep
        started = clock.now
    }

    /// Time since the timer was made: the whole demo so far.
    var elapsed: Duration { clock.now - started }

    /// Records a step measured elsewhere (the service's start, before the timer existed).
    mutating func record(_ step: Step) {
        steps.append(step)
        onStep(step)
    }

    /// Runs `body`, which answers its value and a line saying what happened, and records the step.
    mutating func measure<Value>(
        _ name: String,
        _ body: () async throws -> (Value, detail: String)
    ) async throws -> Value {
        let start = clock.now
        let (value, detail) = try await body()
        record(Step(name: name, detail: detail, duration: clock.now - start))
        return value
    }

    /// The same for a step that answers only its line.
    mutating func measure(_ name: String, _ body: () async throws -> String) async throws {
        try await measure(name) { ((), detail: try await body()) }
    }
}
