import Foundation
import Logging
import Synchronization

/// Keeps a server's last log lines in memory, so that a test that sees the server misbehave (it
/// does not stop, or repeats a send) can show what the server was doing, without writing every
/// test's logs anywhere.
public final class FlightRecorder: Sendable {
    private struct State {
        var lines: [String] = []
        var next = 0
    }

    let capacity: Int
    private let state = Mutex(State())

    public init(capacity: Int = 400) {
        self.capacity = capacity
    }

    func record(_ line: String) {
        state.withLock { state in
            if state.lines.count < capacity {
                state.lines.append(line)
            } else {
                state.lines[state.next] = line
            }
            state.next = (state.next + 1) % capacity
        }
    }

    /// The lines kept, oldest first.
    public var lines: [String] {
        state.withLock { state in
            state.lines.count < capacity ? state.lines : Array(state.lines[state.next...] + state.lines[..<state.next])
        }
    }

    /// A logger whose lines, at `level` and above, go to this recorder.
    public func logger(label: String = "marquee.test", level: Logger.Level = .debug) -> Logger {
        var logger = Logger(label: label) { label in Handler(label: label, recorder: self) }
        logger.logLevel = level
        return logger
    }

    /// A handler that keeps only lines at `floor` and above, whatever level its logger is set to
    /// later (a server lowers or raises its own loggers' levels).
    func handler(keepingFrom floor: Logger.Level) -> any LogHandler {
        Handler(label: "marquee.test", recorder: self, floor: floor)
    }

    private struct Handler: LogHandler {
        let label: String
        let recorder: FlightRecorder
        var floor: Logger.Level = .trace
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .debug

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            guard event.level >= floor else { return }
            var merged = metadata
            if let extra = event.metadata { merged.merge(extra) { _, new in new } }
            let fields = merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            let time = Date().formatted(.iso8601.time(includingFractionalSeconds: true))
            recorder.record("\(time) \(event.level) \(event.message) \(fields)")
        }
    }
}
