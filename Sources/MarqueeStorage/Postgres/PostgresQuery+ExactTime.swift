import Foundation
import PostgresNIO

extension PostgresQuery.StringInterpolation {
    /// A `timestamptz` of `date` to the microsecond, as both stores keep times. PostgresNIO binds a
    /// `Date` truncated, which can land a microsecond before the row the date was read from: a
    /// keyset position bound that way lists its own row again (ascending) or skips its neighbours
    /// (descending). `nil` binds the epoch, for a position that is not used.
    mutating func appendInterpolation(exactTime date: Date?) {
        appendInterpolation(unescaped: "(timestamptz 'epoch' + ")
        appendInterpolation(date?.microsecondsSince1970 ?? 0)
        appendInterpolation(unescaped: "::float8 * interval '1 microsecond')")
    }
}
