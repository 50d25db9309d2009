/// Lower-case hexadecimal, the form of device tokens, checksums and key prefixes.
public enum Hex {
    /// The lower-case digits by value (`UUID.lowercasedText` writes with them too).
    static let digits = Array("0123456789abcdef".utf8)

    /// The bytes as lower-case hex.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var utf8: [UInt8] = []
        utf8.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            utf8.append(digits[Int(byte >> 4)])
            utf8.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: utf8, as: UTF8.self)
    }

    /// Whether `text` is non-empty, of even length and only hex digits (either case).
    @inlinable
    public static func isHex(_ text: some StringProtocol) -> Bool {
        var count = 0
        for byte in text.utf8 {
            guard value(ofDigit: byte) != nil else { return false }
            count += 1
        }
        return count > 0 && count % 2 == 0
    }

    /// The bytes of hex text (either case); `nil` unless `isHex(text)`.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        guard isHex(text) else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count / 2)
        var high: UInt8?
        for digit in text.utf8 {
            // Every digit is one: isHex said so.
            let value = value(ofDigit: digit) ?? 0
            if let first = high {
                bytes.append(first << 4 | value)
                high = nil
            } else {
                high = value
            }
        }
        return bytes
    }

    /// The value of one hex digit (either case), as an ASCII byte; `nil` for any other byte.
    @inlinable
    public static func value(ofDigit digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
