/// Header field values as HTTP reads them.
enum HTTPFieldText {
    /// `text` without the optional whitespace (spaces and horizontal tabs, RFC 9110 §5.6.3) around
    /// it. By UTF-8 bytes: Foundation's `trimmingCharacters` bridged each value through NSString,
    /// on every request's `Authorization` and `Content-Type`.
    static func trimmed(_ text: some StringProtocol) -> Substring {
        let utf8 = Substring(text).utf8
        let isSpace = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        guard let first = utf8.firstIndex(where: { !isSpace($0) }), let last = utf8.lastIndex(where: { !isSpace($0) })
        else { return "" }
        return Substring(utf8[first...last])
    }

    /// The credential of an `Authorization: Bearer …` value (the scheme in any case), without the
    /// optional whitespace around it; nil for a missing value or another scheme.
    static func bearerCredential(_ value: String?) -> Substring? {
        // By UTF-8 bytes: counting characters and lower-casing the scheme cost more than the rest
        // of a remembered key's authentication.
        guard let value else { return nil }
        let utf8 = value.utf8
        guard utf8.count > 7,
            zip(utf8.prefix(7), "bearer ".utf8).allSatisfy({ byte, expected in
                (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 == expected : byte == expected
            })
        else { return nil }
        return trimmed(Substring(utf8.dropFirst(7)))
    }
}
