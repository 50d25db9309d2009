import Foundation

/// JSON Pointer (RFC 6901) reference tokens: how an object's key is written in a pointer such as
/// a problem's `pointer` (`/contentState/scor~1er`) or a `$ref` (`#/components/schemas/App`).
public enum JSONPointer {
    /// `key` as a reference token: `~` as `~0`, `/` as `~1` (in that order, so that a `/`'s `~1`
    /// is not escaped again).
    public static func referenceToken(_ key: String) -> String {
        // Almost every key has neither: it is its own token (the contract check makes one per key
        // of every request body).
        guard key.utf8.contains(where: { $0 == UInt8(ascii: "~") || $0 == UInt8(ascii: "/") }) else { return key }
        return key.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1")
    }

    /// The key a reference token names: `~1` as `/`, then `~0` as `~`.
    public static func key(_ referenceToken: some StringProtocol) -> String {
        String(referenceToken).replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
    }
}
