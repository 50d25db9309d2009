import Foundation

/// An answer's `Retry-After` (RFC 9110 §10.2.3): a number of seconds, or an HTTP date.
public enum RetryAfter: Sendable, Equatable {
    case seconds(Int)
    case date(Date)

    /// Reads the header; nil when it is neither form.
    public init?(header: String) {
        let value = header.trimmingCharacters(in: .whitespaces)
        if let seconds = Int(value), seconds >= 0 {
            self = .seconds(seconds)
            return
        }
        // IMF-fixdate, the form senders must use ("Sun, 06 Nov 1994 08:49:37 GMT").
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        guard let date = formatter.date(from: value) else { return nil }
        self = .date(date)
    }

    /// How long to wait from `now`; never negative (a date already past means now).
    public func delay(from now: Date) -> Duration {
        switch self {
        case .seconds(let seconds): .seconds(seconds)
        case .date(let date): .milliseconds(max(0, Int((date.timeIntervalSince(now) * 1000).rounded(.up))))
        }
    }
}
