import Foundation
import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension JSONLogHandler {
    /// Adds `metadata`'s values, as JSON text, under their dotted keys (`prefix` + key), replacing
    /// what an earlier source put there.
    static func flatten(_ metadata: Logger.Metadata, prefix: String = "", into fields: inout [String: String]) {
        for (key, value) in metadata {
            let path = prefix + key
            switch value {
            case .dictionary(let nested):
                flatten(nested, prefix: path + ".", into: &fields)
            default:
                fields[path] = render(value, key: path)
            }
        }
    }

    /// A value as JSON: strings as strings (numbers too: a field keeps one type whatever the
    /// call site passed), arrays as arrays, nested dictionaries as objects.
    static func render(_ value: Logger.Metadata.Value, key: String) -> String {
        switch value {
        case .string(let text):
            return quoted(redacted(text, key: key))
        case .stringConvertible(let convertible):
            return quoted(redacted(convertible.description, key: key))
        case .array(let values):
            return "[" + values.map { render($0, key: key) }.joined(separator: ",") + "]"
        case .dictionary(let nested):
            let members = nested.keys.sorted().map { member in
                quoted(member) + ":" + render(nested[member] ?? .string(""), key: key + "." + member)
            }
            return "{" + members.joined(separator: ",") + "}"
        }
    }

    /// Keys whose values are secrets; compared on the key's last dotted part, lower case, without
    /// `_` and `-`.
    static let secretNames: Set<String> = [
        "authorization", "password", "secret", "privatekey", "masterkey", "masterkeys", "apikey", "bearertoken",
        "providertoken", "jwt",
    ]
    /// Keys whose values are push or device tokens: only their last 8 characters are written.
    static let tokenNames: Set<String> = ["token", "pushtoken", "devicetoken", "updatetoken", "pushtostarttoken"]

    static func redacted(_ value: String, key: String) -> String {
        let name = String(key.split(separator: ".").last ?? "").lowercased().filter { $0 != "_" && $0 != "-" }
        if secretNames.contains(name) { return "[redacted]" }
        if tokenNames.contains(name), value.count > 8 { return "…" + value.suffix(8) }
        return value
    }

    /// `text` as a JSON string: quotes, backslashes and control characters escaped; everything
    /// else (UTF-8 included) as it is.
    static func quoted(_ text: String) -> String {
        var result = "\""
        result.reserveCapacity(text.utf8.count + 2)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case "\u{08}": result += "\\b"
            case "\u{0C}": result += "\\f"
            case let control where control.value < 0x20 || control.value == 0x7F:
                let hex = String(control.value, radix: 16)
                result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default:
                result.unicodeScalars.append(scalar)
            }
        }
        result += "\""
        return result
    }

    /// ISO 8601 in UTC with milliseconds: `2026-11-28T15:00:00.123Z`. Built from `gmtime_r`, not a
    /// date formatter: it runs once per line, on whichever thread logs.
    static func timestamp(_ date: Date) -> String {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded())
        var seconds = time_t(milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000)
        let fraction = Int(milliseconds - Int64(seconds) * 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        var text = ""
        text.reserveCapacity(24)
        func append(_ value: Int, digits: Int) {
            let decimal = String(value)
            text += String(repeating: "0", count: max(0, digits - decimal.count)) + decimal
        }
        append(Int(parts.tm_year) + 1900, digits: 4)
        text += "-"
        append(Int(parts.tm_mon) + 1, digits: 2)
        text += "-"
        append(Int(parts.tm_mday), digits: 2)
        text += "T"
        append(Int(parts.tm_hour), digits: 2)
        text += ":"
        append(Int(parts.tm_min), digits: 2)
        text += ":"
        append(Int(parts.tm_sec), digits: 2)
        text += "."
        append(fraction, digits: 3)
        text += "Z"
        return text
    }
}
