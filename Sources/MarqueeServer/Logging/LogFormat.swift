import Logging

/// How `marquee serve` writes its log (`log.format`).
public enum LogFormat: String, Sendable, Hashable, CaseIterable {
    /// swift-log's plain lines, for a person at a terminal.
    case text
    /// One JSON object per line (`JSONLogHandler`), for a log collector.
    case json

    /// A handler of this format writing to standard error at `level`.
    public func makeHandler(label: String, level: Logger.Level) -> any LogHandler {
        switch self {
        case .text:
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        case .json:
            var handler = JSONLogHandler(label: label)
            handler.logLevel = level
            return handler
        }
    }
}
