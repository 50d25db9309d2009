/// A failure a client command reports itself: a message for standard error and an exit code.
/// Usage and configuration errors are these (code 2), so are refusals found before any request.
struct CLIFailure: Error, Sendable, CustomStringConvertible {
    var code: CLIExitCode
    var message: String

    init(_ code: CLIExitCode, _ message: String) {
        self.code = code
        self.message = message
    }

    static func usage(_ message: String) -> CLIFailure {
        CLIFailure(.usage, message)
    }

    var description: String { message }
}
