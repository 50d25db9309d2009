/// A documented answer other than those a command handles (the middleware already turned error
/// statuses into `MarqueeClientError`s, so this is a 3xx or a success the command did not expect).
struct UnexpectedOutput: Error, CustomStringConvertible {
    var description: String

    init(_ output: Any) {
        description = "unexpected answer: \(output)"
    }
}
