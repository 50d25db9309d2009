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
}
