import Foundation

/// How values read in tables and summaries.
enum Formatting {
    /// RFC 3339 in UTC, to the second: what the API speaks, and unambiguous.
    static func date(_ date: Date?) -> String {
        guard let date else { return "-" }
        return date.formatted(.iso8601)
    }

    /// 1234567 → "1,234,567".
    static func count<Value: BinaryInteger>(_ value: Value) -> String {
        let digits = String(value.magnitude)
        var grouped = ""
        for (index, character) in digits.reversed().enumerated() {
            if index > 0 && index % 3 == 0 { grouped.append(",") }
            grouped.append(character)
        }
        return (value < 0 ? "-" : "") + String(grouped.reversed())
    }

    /// Bytes in B, kB, MB or GB (powers of 1000, as file managers show them).
    static func bytes(_ value: Int64) -> String {
        let units = ["B", "kB", "MB", "GB", "TB"]
        var amount = Double(value)
        var unit = 0
        while amount >= 1000 && unit < units.count - 1 {
            amount /= 1000
            unit += 1
        }
        return unit == 0 ? "\(value) B" : String(format: "%.1f %@", amount, units[unit])
    }

    /// Seconds as "42s", "3m 05s" or "1h 02m".
    static func duration(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0 else { return "-" }
        let total = Int(seconds.rounded())
        if total < 60 { return "\(total)s" }
        if total < 3600 { return String(format: "%dm %02ds", total / 60, total % 60) }
        return String(format: "%dh %02dm", total / 3600, (total % 3600) / 60)
    }

    static func list(_ values: [String]?) -> String {
        guard let values, !values.isEmpty else { return "-" }
        return values.joined(separator: ",")
    }
}
