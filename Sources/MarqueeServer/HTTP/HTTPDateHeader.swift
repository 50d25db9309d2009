import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The `Date` header's value (RFC 9110's IMF-fixdate) for answers written without Hummingbird
/// (`ChannelReadAnswer`), which keeps its own to itself: formatted once a second, not per answer.
final class HTTPDateHeader: Sendable {
    private let current = Mutex<(second: Int, text: String)>((-1, ""))

    var value: String {
        let now = Int(time(nil))
        return current.withLock { current in
            if current.second != now { current = (now, Self.format(secondsSince1970: now)) }
            return current.text
        }
    }

    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// `Sun, 06 Nov 1994 08:49:37 GMT`.
    static func format(secondsSince1970 seconds: Int) -> String {
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        func twoDigits(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let day = days[Int(parts.tm_wday)]
        let month = months[Int(parts.tm_mon)]
        return "\(day), \(twoDigits(parts.tm_mday)) \(month) \(parts.tm_year + 1900) "
            + "\(twoDigits(parts.tm_hour)):\(twoDigits(parts.tm_min)):\(twoDigits(parts.tm_sec)) GMT"
    }
}
