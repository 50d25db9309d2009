/// How a push token appears in logs and descriptions: its last 8 characters after an ellipsis,
/// never the whole token (the house rule for every module).
public enum PushTokenRedaction {
    /// How many trailing characters of a token may be shown.
    public static let visibleCharacters = 8

    /// `…` and the token's last ``visibleCharacters`` characters.
    public static func redacted(_ token: some StringProtocol) -> String {
        "…" + token.suffix(visibleCharacters)
    }

    /// `path` with every segment that could be a push token (32 or more hexadecimal characters)
    /// shortened as ``redacted(_:)`` does: request paths carry tokens
    /// (`/v1/push-to-start-tokens/{token}`), and a logged path must not.
    public static func redactingTokens(inPath path: some StringProtocol) -> String {
        path.split(separator: "/", omittingEmptySubsequences: false).map { segment -> String in
            guard segment.utf8.count >= 32, segment.utf8.allSatisfy(\.isHexDigitASCII) else { return String(segment) }
            return redacted(segment)
        }.joined(separator: "/")
    }
}

extension UInt8 {
    fileprivate var isHexDigitASCII: Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(self)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(self)
    }
}
