/// How a push token appears in logs and descriptions: its last 8 characters after an ellipsis,
/// never the whole token (the house rule for every module).
public enum PushTokenRedaction {
    /// How many trailing characters of a token may be shown.
    public static let visibleCharacters = 8

    /// `…` and the token's last ``visibleCharacters`` characters.
    public static func redacted(_ token: some StringProtocol) -> String {
        "…" + token.suffix(visibleCharacters)
    }
}
