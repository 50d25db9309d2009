import ArgumentParser
import MarqueeClient

extension MarqueeCommand {
    /// Parses `arguments`, runs the command in `CLIContext.current` and answers the exit code,
    /// having written any error to its standard error. `main` and the tests both come through
    /// here, so the tests check exactly what a script sees, except the `exit` itself.
    static func execute(_ arguments: [String]) async -> Int32 {
        let context = CLIContext.current
        do {
            var command = try parseAsRoot(arguments)
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            return CLIExitCode.ok.rawValue
        } catch let failure as ClientCommandError {
            context.printError(
                ErrorReport(error: failure.error, connection: failure.connection, notes: failure.notes).text
            )
            return CLIExitCode(failure.error).rawValue
        } catch let error as MarqueeClientError {
            context.printError(ErrorReport(error: error, connection: nil).text)
            return CLIExitCode(error).rawValue
        } catch let failure as CLIFailure {
            context.printError("error: \(failure.message)")
            return failure.code.rawValue
        } catch {
            // argument-parser's own outcomes: help and version (0, on stdout), usage errors (64,
            // mapped to 2), ExitCode thrown by commands, and any other error (1).
            let code = exitCode(for: error)
            let message = fullMessage(for: error)
            if code == .success {
                if !message.isEmpty { context.print(message) }
                return 0
            }
            if !message.isEmpty { context.printError(message) }
            return code == .validationFailure ? CLIExitCode.usage.rawValue : code.rawValue
        }
    }
}
