/// Checks the caller-supplied strings that go into headers or paths (bundle IDs, channel IDs, collapse
/// IDs) once, when a request is made: the connection skips NIOHTTP2's per-frame validation.
enum APNSHeaderValue {
    /// Visible ASCII only: no spaces, controls or line breaks that could split a header or a path.
    static func validate(_ value: String, name: String) throws(APNSError) {
        guard !value.isEmpty, value.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw .invalidRequest("\(name) must be non-empty visible ASCII")
        }
    }
}
