import Foundation

extension UUID {
    /// The canonical text in lower case, as `uuidString.lowercased()` writes it, written by hand:
    /// every request ID and every push's `apns-id` is one, and Foundation's formatting and then
    /// lower-casing cost a string each.
    public var lowercasedText: String {
        let digits = Hex.digits
        return withUnsafeBytes(of: uuid) { bytes in
            String(unsafeUninitializedCapacity: 36) { text in
                var index = 0
                for (position, byte) in bytes.enumerated() {
                    if position == 4 || position == 6 || position == 8 || position == 10 {
                        text[index] = UInt8(ascii: "-")
                        index += 1
                    }
                    text[index] = digits[Int(byte >> 4)]
                    text[index + 1] = digits[Int(byte & 0x0F)]
                    index += 2
                }
                return index
            }
        }
    }

    /// The UUID of its canonical text, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` in either case: what
    /// `UUID(uuidString:)` accepts, read by hand. Foundation's parser goes through `sscanf`, which
    /// took about 1 % of a start fan-out's CPU (every accepted push's `apns-id` is read).
    public init?(canonical text: String) {
        var text = text
        var value: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let parsed = text.withUTF8 { utf8 in
            withUnsafeMutableBytes(of: &value) { bytes in Self.parseCanonical(utf8, into: bytes) }
        }
        guard parsed else { return nil }
        self.init(uuid: value)
    }

    /// Reads 36 characters of groups of 8, 4, 4, 4 and 12 hex digits between hyphens into 16 bytes;
    /// each group has an even length, so a byte's two digits never straddle a hyphen.
    private static func parseCanonical(
        _ utf8: UnsafeBufferPointer<UInt8>,
        into bytes: UnsafeMutableRawBufferPointer
    ) -> Bool {
        guard utf8.count == 36 else { return false }
        var index = 0
        var byte = 0
        while index < 36 {
            if index == 8 || index == 13 || index == 18 || index == 23 {
                guard utf8[index] == UInt8(ascii: "-") else { return false }
                index += 1
                continue
            }
            guard let high = Hex.value(ofDigit: utf8[index]), let low = Hex.value(ofDigit: utf8[index + 1]) else {
                return false
            }
            bytes[byte] = high << 4 | low
            byte += 1
            index += 2
        }
        return true
    }
}
