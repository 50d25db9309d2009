import ArgumentParser
import MarqueeClient

/// A command that talks to a running server: it resolves the connection from its `ClientOptions`
/// and runs with a client; errors carry the connection so that reports can say where the key and
/// the server came from.
protocol ClientCommand: AsyncParsableCommand {
    var options: ClientOptions { get }
    func run(client: MarqueeClient, context: CLIContext) async throws
}

extension ClientCommand {
    func run() async throws {
        let context = CLIContext.current
        let (client, connection) = try options.client(in: context)
        do {
            try await run(client: client, context: context)
        } catch let error as MarqueeClientError {
            throw ClientCommandError(error: error, connection: connection)
        } catch let stopped as ImportStopped {
            throw ClientCommandError(
                error: stopped.error,
                connection: connection,
                notes: [
                    """
                    the import stopped at line \(stopped.line); the rows before it are registered: import the \
                    rest from there (with the CSV header)
                    """
                ]
            )
        }
    }

    /// Prints the answer: the server's JSON with `--json`, else what `human` makes of its value.
    func output<Value>(_ response: MarqueeResponse<Value>, in context: CLIContext, human: (Value) -> String) {
        if options.json {
            context.print(response.json.map { String(decoding: $0, as: UTF8.self) } ?? "{}")
        } else {
            let text = human(response.value)
            if !text.isEmpty { context.print(text) }
        }
    }
}

/// A `MarqueeClientError` with the connection it happened on, for the report.
struct ClientCommandError: Error, Sendable {
    var error: MarqueeClientError
    var connection: Connection
    /// What the command adds to the report, e.g. where an import stopped.
    var notes: [String] = []
}
