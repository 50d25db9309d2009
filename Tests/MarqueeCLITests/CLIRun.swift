import Foundation
import Synchronization

@testable import MarqueeCLI

/// What one `marquee …` run left behind: its exit code and everything it wrote.
struct CLIRun: Sendable, CustomStringConvertible {
    var arguments: [String]
    var code: Int32
    var standardOutput: String
    var standardError: String

    /// Standard output as a JSON object (empty when it is not one), for `--json` runs.
    var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(standardOutput.utf8))) as? [String: Any] ?? [:]
    }

    var description: String {
        """
        marquee \(arguments.joined(separator: " ")) → \(code)\n--- stdout\n\(standardOutput)--- \
        stderr\n\(standardError)
        """
    }
}

/// Runs `marquee` commands in-process, through the same `MarqueeCommand.execute` as the
/// executable's `main`, with an environment of the test's own and captured output. In-process
/// rather than a subprocess of the built binary: no dependence on where the build put it, no
/// inherited environment or profile file, each test's runs isolated in a task-local even when
/// tests run in parallel, and failures show as Swift values rather than a dead process.
struct CLI: Sendable {
    var environment: [String: String]
    var standardErrorIsTerminal = false

    /// A CLI pointed at `server` through MARQUEE_SERVER, with a private profile file and home.
    init(
        server: String?,
        apiKey: String? = nil,
        home: URL = FileManager.default.temporaryDirectory.appendingPathComponent(
            "marquee-cli-\(UUID().uuidString.prefix(8))"
        )
    ) {
        var environment = ["HOME": home.path, "MARQUEE_CONFIG": home.appendingPathComponent("profiles.json").path]
        environment["MARQUEE_SERVER"] = server
        environment["MARQUEE_API_KEY"] = apiKey
        self.environment = environment
    }

    var profileFile: String { environment["MARQUEE_CONFIG"] ?? "" }

    func callAsFunction(_ arguments: String...) async -> CLIRun {
        await run(arguments)
    }

    func run(_ arguments: [String]) async -> CLIRun {
        let output = Buffer()
        let error = Buffer()
        let context = CLIContext(
            environment: environment,
            standardOutput: TextOutput { output.append($0) },
            standardError: TextOutput { error.append($0) },
            standardErrorIsTerminal: standardErrorIsTerminal,
            transport: nil
        )
        let code = await CLIContext.$current.withValue(context) { await MarqueeCommand.execute(arguments) }
        return CLIRun(arguments: arguments, code: code, standardOutput: output.text, standardError: error.text)
    }

    /// The same CLI with other environment variables.
    func with(_ variables: [String: String?]) -> CLI {
        var copy = self
        for (name, value) in variables { copy.environment[name] = value }
        return copy
    }
}

/// Text written by a command, collected safely from whatever task writes it.
private final class Buffer: Sendable {
    private let storage = Mutex("")

    func append(_ text: String) {
        storage.withLock { $0 += text }
    }

    var text: String { storage.withLock { $0 } }
}
