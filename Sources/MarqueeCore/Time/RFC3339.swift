import Foundation

/// RFC 3339 date-times as the RFC allows them, which is wider than what `ISO8601DateFormatter`
/// takes: fractional seconds of any length (`2026-12-21T15:30:37.5Z`), a lowercase `t` and `z`
/// (section 5.6 NOTE), a numeric offset (`+01:00`, `-00:00`) and a leap second (`:60`, read as the
/// first instant of the next minute). Every time the API takes goes through `parse`.
public enum RFC3339 {
    /// The instant `text` names, or nil when it is not an RFC 3339 `date-time`.
    public static func parse(_ text: some StringProtocol) -> Date? {
        var scanner = Scanner(bytes: Array(text.utf8))
        guard let year = scanner.digits(4), scanner.take("-"),
            let month = scanner.digits(2), scanner.take("-"),
            let day = scanner.digits(2), scanner.take("T") || scanner.take("t"),
            let hour = scanner.digits(2), scanner.take(":"),
            let minute = scanner.digits(2), scanner.take(":"),
            let second = scanner.digits(2)
        else { return nil }
        var fraction = 0.0
        if scanner.take(".") {
            var scale = 0.1
            var count = 0
            while let digit = scanner.digit() {
                fraction += Double(digit) * scale
                scale /= 10
                count += 1
            }
            guard count > 0 else { return nil }
        }
        var offsetSeconds = 0
        if scanner.take("Z") || scanner.take("z") {
            offsetSeconds = 0
        } else if let sign = scanner.sign() {
            guard let offsetHours = scanner.digits(2), scanner.take(":"), let offsetMinutes = scanner.digits(2),
                offsetHours <= 23, offsetMinutes <= 59
            else { return nil }
            offsetSeconds = sign * (offsetHours * 3600 + offsetMinutes * 60)
        } else {
            return nil
        }
        guard scanner.atEnd, (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year),
            hour <= 23, minute <= 59, second <= 60
        else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = Double(days) * 86_400 + Double(hour * 3600 + minute * 60 + second - offsetSeconds) + fraction
        return Date(timeIntervalSince1970: seconds)
    }

    /// `date` in UTC with a `Z` (`2026-12-21T15:30:37Z`); with `milliseconds`, they follow when
    /// the time has a fraction of a second (`2026-12-21T15:30:37.500Z`), else the seconds are
    /// truncated, as the API has always written its times.
    public static func format(_ date: Date, milliseconds withMilliseconds: Bool = false) -> String {
        let interval = date.timeIntervalSince1970
        var milliseconds = Int64((interval * 1000).rounded(.down))
        if Double(milliseconds) > interval * 1000 { milliseconds -= 1 }
        var days = milliseconds / 86_400_000
        var rest = milliseconds % 86_400_000
        if rest < 0 {
            rest += 86_400_000
            days -= 1
        }
        let (year, month, day) = civil(fromDays: days)
        let second = rest / 1000
        let millis = rest % 1000
        // Digits by hand into the string's own bytes: `String(format:)` goes through NSString, and
        // every time of every answer the API writes is formatted here. A year outside 0...9999
        // (never a time Marquee keeps) takes as many digits as it needs, after a minus sign if
        // negative.
        var yearDigits = 4
        var beyond = year.magnitude / 10_000
        while beyond > 0 {
            yearDigits += 1
            beyond /= 10
        }
        let yearLength = (year < 0 ? 1 : 0) + yearDigits
        let withFraction = withMilliseconds && millis != 0
        let length = yearLength + (withFraction ? 20 : 16)
        return String(unsafeUninitializedCapacity: length) { bytes in
            func put(_ value: UInt64, width: Int, at offset: Int) {
                var value = value
                for index in stride(from: offset + width - 1, through: offset, by: -1) {
                    bytes[index] = UInt8(ascii: "0") + UInt8(value % 10)
                    value /= 10
                }
            }
            if year < 0 { bytes[0] = UInt8(ascii: "-") }
            put(year.magnitude, width: yearDigits, at: yearLength - yearDigits)
            let rest = yearLength
            bytes[rest] = UInt8(ascii: "-")
            put(UInt64(month), width: 2, at: rest + 1)
            bytes[rest + 3] = UInt8(ascii: "-")
            put(UInt64(day), width: 2, at: rest + 4)
            bytes[rest + 6] = UInt8(ascii: "T")
            put(UInt64(second / 3600), width: 2, at: rest + 7)
            bytes[rest + 9] = UInt8(ascii: ":")
            put(UInt64(second / 60 % 60), width: 2, at: rest + 10)
            bytes[rest + 12] = UInt8(ascii: ":")
            put(UInt64(second % 60), width: 2, at: rest + 13)
            if withFraction {
                bytes[rest + 15] = UInt8(ascii: ".")
                put(UInt64(millis), width: 3, at: rest + 16)
            }
            bytes[length - 1] = UInt8(ascii: "Z")
            return length
        }
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private struct Scanner {
        let bytes: [UInt8]
        var index = 0

        init(bytes: [UInt8]) { self.bytes = bytes }

        var atEnd: Bool { index == bytes.count }

        mutating func take(_ character: Unicode.Scalar) -> Bool {
            guard index < bytes.count, bytes[index] == UInt8(character.value) else { return false }
            index += 1
            return true
        }

        mutating func digit() -> Int? {
            guard index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") else {
                return nil
            }
            defer { index += 1 }
            return Int(bytes[index] - UInt8(ascii: "0"))
        }

        mutating func digits(_ count: Int) -> Int? {
            var value = 0
            for _ in 0..<count {
                guard let digit = digit() else { return nil }
                value = value * 10 + digit
            }
            return value
        }

        mutating func sign() -> Int? {
            if take("+") { return 1 }
            if take("-") { return -1 }
            return nil
        }
    }
}
