import ArgumentParser
import Foundation
import Logging
import MarqueeEmulator
import MarqueeServer
import MarqueeStorage

/// `marquee serve`: the service. With no configuration it stores in SQLite under ./data and runs
/// the APNs emulator in-process.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Runs the Marquee service: the REST API, channel management and the token registry.",
        discussion: """
            Every setting is a configuration key that can also come from the environment \
            (MARQUEE_ + the key in upper snake case, e.g. MARQUEE_HTTP_PORT) or a JSON file (--config). \
            Precedence: flags, then the environment, then the file, then defaults. With no APNs target \
            configured, an APNs emulator runs in-process and Marquee says so at start.
            """
    )

    @Option(help: "Address to listen on (http.host).")
    var host: String?

    @Option(help: "Port to listen on (http.port).")
    var port: Int?

    @Option(
        name: .customLong("database-url"),
        help: "postgres://user:password@host:port/database (database.url); absent: embedded SQLite."
    )
    var databaseURL: String?

    @Option(name: .customLong("data-dir"), help: "Folder of the embedded defaults (data.dir, default ./data).")
    var dataDirectory: String?

    @Option(name: .customLong("sql-dir"), help: "Folder holding postgres/ and sqlite/ migrations (sql.dir).")
    var sqlDirectory: String?

    @Option(name: .customLong("apns"), help: "APNs target (apns.target): emulator, apple or custom.")
    var apnsTarget: String?

    @Option(name: .customLong("config"), help: "A JSON file of configuration keys.")
    var configFile: String?

    @Option(help: "Log level (log.level, default info): trace, debug, info, notice, warning, error, critical.")
    var logLevel: Logger.Level?

    @Option(
        help:
            """
            Log format (log.format): text, or json for one JSON object per line; default text on a terminal, json \
            otherwise.
            """
    )
    var logFormat: LogFormat?

    func run() async throws {
        var values: [String: String] = [:]
        values["http.host"] = host
        values["http.port"] = port.map(String.init)
        values["database.url"] = databaseURL
        values["data.dir"] = dataDirectory
        values["sql.dir"] = sqlDirectory
        values["apns.target"] = apnsTarget
        values["log.level"] = logLevel?.rawValue
        values["log.format"] = logFormat?.rawValue
        let configuration = try await ConfigurationError.exitingOnRefusal {
            try await ServerConfiguration.load(flags: values, file: configFile)
        }
        let level = configuration.logLevel
        // A person at a terminal reads text; a container's log collector reads JSON.
        let format = configuration.logFormat ?? (isatty(STDERR_FILENO) != 0 ? .text : .json)
        LoggingSystem.bootstrap { label in format.makeHandler(label: label, level: level) }
        let logger = Logger(label: "marquee")
        do {
            try await MarqueeServer.run(configuration: configuration, logger: logger) { started in
                StartupBanner(started: started, configuration: configuration).print()
            }
        } catch let error as ConfigurationError {
            FileHandle.standardError.write(Data("marquee: \(error)\n".utf8))
            throw ExitCode(2)
        } catch let error as PostgresUnavailableError {
            FileHandle.standardError.write(Data("marquee: \(error)\n".utf8))
            throw ExitCode(1)
        } catch let error as MigrationError {
            FileHandle.standardError.write(Data("marquee: migration refused: \(error)\n".utf8))
            throw ExitCode(1)
        }
    }
}

/// What `marquee serve` tells a person at start: where it listens, what it stores in, where APNs
/// is (loudly, when it is an emulator) and, once, the first deployment key.
struct StartupBanner {
    let started: MarqueeServer.Started
    let configuration: ServerConfiguration

    func print() {
        var lines = [
            "Marquee is listening on \(started.baseURL)  (API: \(started.baseURL)/openapi.json)",
            "Web console: \(started.baseURL)/console",
            "Store: \(started.storeDescription)",
        ]
        if let emulator = started.emulator {
            lines.append("")
            lines.append(
                "!! APNs is the IN-PROCESS EMULATOR: nothing reaches Apple. Configure apns.target for real devices."
            )
            if let inspection = emulator.inspectionURL {
                lines.append("!! Emulator inspection API: \(inspection)  (virtual devices, activities, channels)")
            }
        }
        if let key = started.firstDeploymentKey {
            lines.append("")
            lines.append("First start: a deployment API key was created. It is shown only now; keep it safe:")
            lines.append("")
            lines.append("    \(key)")
            lines.append("")
            lines.append(
                """
                Sign in with it at \(started.baseURL)/console, or use it as  Authorization: Bearer <key>  to \
                create apps (POST /v1/apps).
                """
            )
        }
        // Written directly, unbuffered: the key must be on the terminal before anything else happens.
        FileHandle.standardOutput.write(Data((lines.joined(separator: "\n") + "\n").utf8))
    }
}
