import Foundation

extension Date {
    /// Microseconds since 1970, rounded: both stores keep times at this precision, and a time read
    /// back from either rounds to the value stored.
    var microsecondsSince1970: Int64 {
        Int64((timeIntervalSince1970 * 1_000_000).rounded())
    }
}
