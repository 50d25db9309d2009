import Foundation
import MarqueeAPI
import MarqueeCore

/// The JSON of a push-to-start token as the generated route writes it
/// (`Components.Schemas.PushToStartToken` through `JSONAnswerStyle.generatedRouteEncoder`), written
/// directly: keys sorted, absent optionals left out, dates as `RFC3339.format`. Foundation's
/// encoder cost more than the rest of a registration's answer. A string with a control character
/// (which Foundation escapes its own way) goes through the encoder instead, so the bytes are
/// always the encoder's (`PushToStartTokenAnswerTests`).
enum PushToStartTokenAnswer {
    static func json(_ token: PushToStartToken) throws -> [UInt8] {
        if let bytes = written(token) { return bytes }
        return Array(try JSONAnswerStyle.generatedRouteEncoder().encode(Components.Schemas.PushToStartToken(token)))
    }

    /// Nil when a string needs escaping beyond `"` and `\`.
    static func written(_ token: PushToStartToken) -> [UInt8]? {
        var writer = Writer()
        // The generated type's properties in `sortedKeys` order.
        writer.field("attributesType", string: token.attributesType)
        if let deviceID = token.deviceID { writer.field("deviceID", string: deviceID) }
        if let deviceToken = token.deviceToken { writer.field("deviceToken", string: deviceToken) }
        writer.field("environment", string: token.environment.rawValue)
        writer.field("firstRegisteredAt", string: RFC3339.format(token.firstRegisteredAt))
        writer.field("frequentPushesEnabled", literal: token.frequentPushesEnabled ? "true" : "false")
        if let invalidatedAt = token.invalidatedAt {
            writer.field("invalidatedAt", string: RFC3339.format(invalidatedAt))
        }
        if let reason = token.invalidationReason { writer.field("invalidationReason", string: reason.reasonString) }
        if let iosVersion = token.iosVersion { writer.field("iosVersion", string: iosVersion) }
        writer.field("lastRegisteredAt", string: RFC3339.format(token.lastRegisteredAt))
        writer.field("tags", strings: token.tags)
        writer.field("token", string: token.token)
        if let userID = token.userID { writer.field("userID", string: userID) }
        writer.field("valid", literal: token.isValid ? "true" : "false")
        return writer.finished()
    }

    private struct Writer {
        var bytes: [UInt8] = [UInt8(ascii: "{")]
        var escapable = true

        init() {
            bytes.reserveCapacity(512)
        }

        mutating func field(_ name: StaticString, literal: StaticString) {
            key(name)
            append(literal)
        }

        mutating func field(_ name: StaticString, string: String) {
            key(name)
            self.string(string)
        }

        mutating func field(_ name: StaticString, strings: [String]) {
            key(name)
            bytes.append(UInt8(ascii: "["))
            for (index, text) in strings.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                string(text)
            }
            bytes.append(UInt8(ascii: "]"))
        }

        mutating func finished() -> [UInt8]? {
            bytes.append(UInt8(ascii: "}"))
            return escapable ? bytes : nil
        }

        private mutating func key(_ name: StaticString) {
            if bytes.count > 1 { bytes.append(UInt8(ascii: ",")) }
            bytes.append(UInt8(ascii: "\""))
            append(name)
            bytes.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
        }

        private mutating func append(_ text: StaticString) {
            text.withUTF8Buffer { bytes.append(contentsOf: $0) }
        }

        private mutating func string(_ text: String) {
            bytes.append(UInt8(ascii: "\""))
            for byte in text.utf8 {
                if byte < 0x20 { escapable = false }
                if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { bytes.append(UInt8(ascii: "\\")) }
                bytes.append(byte)
            }
            bytes.append(UInt8(ascii: "\""))
        }
    }
}
