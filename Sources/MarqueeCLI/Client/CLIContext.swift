import Foundation
import OpenAPIRuntime

/// What the client commands use of the process they run in: the environment, standard output and
/// error, whether those are terminals, and the HTTP transport. A task-local, so that tests run the
/// parsed commands in-process, concurrently, each with its own environment and captured output.
struct CLIContext: Sendable {
    var environment: [String: String]
    var standardOutput: TextOutput
    var standardError: TextOutput
    /// Whether standard error is a terminal: progress bars are drawn only there.
    var standardErrorIsTerminal: Bool
    /// A transport for the client; nil for AsyncHTTPClient's shared client.
    var transport: (any ClientTransport)?
    /// Whether a command may take over SIGINT and SIGTERM (to stop what it started and clean
    /// up): the real process only; a test process keeps its own signals.
    var ownsSignals = false

    @TaskLocal static var current = CLIContext.process

    /// The real process: its environment, its file descriptors 1 and 2.
    static var process: CLIContext {
        CLIContext(
            environment: ProcessInfo.processInfo.environment,
            standardOutput: .standardOutput,
            standardError: .standardError,
            standardErrorIsTerminal: isatty(STDERR_FILENO) == 1,
            transport: nil,
            ownsSignals: true
        )
    }

    /// Writes `text` and a newline to standard output.
    func print(_ text: String) {
        standardOutput.write(text.hasSuffix("\n") ? text : text + "\n")
    }

    /// Writes a JSON object of the CLI's own (for answers without a body) to standard output.
    func printJSON(_ object: [String: Any]) {
        let options: JSONSerialization.WritingOptions = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let data = (try? JSONSerialization.data(withJSONObject: object, options: options)) ?? Data("{}".utf8)
        print(String(decoding: data, as: UTF8.self))
    }

    /// Writes `text` and a newline to standard error.
    func printError(_ text: String) {
        standardError.write(text.hasSuffix("\n") ? text : text + "\n")
    }
}
