/// Percent-decoding of URL path segments, as Foundation's `removingPercentEncoding` reads them:
/// `%XX` is the byte XX, `+` stays `+`, and text with a stray `%` or whose bytes are not UTF-8
/// decodes to nothing. Every request's path goes through it (the contract's route match, the
/// channel-ID read), and nearly none has a `%`: such text is answered as it is, without
/// Foundation's round trip through CoreFoundation.
public enum PercentDecoding {
    public static func decoded(_ text: some StringProtocol) -> String? {
        guard text.utf8.contains(UInt8(ascii: "%")) else { return String(text) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(Hex.value(ofDigit:)),
                let low = iterator.next().flatMap(Hex.value(ofDigit:))
            else { return nil }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
