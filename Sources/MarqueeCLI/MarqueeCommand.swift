import ArgumentParser
import Foundation
import Logging
import MarqueeServer

/// `marquee`: runs Live Activities for events with big audiences.
@main
struct MarqueeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "marquee",
        abstract: "Runs Apple Live Activities for events with big audiences over APNs broadcast channels.",
        discussion: """
            The service: serve, migrate, emulator; demo tells a match to 1,000 virtual iPhones in \
            one command. Against a running server, over its REST API: \
            apps, keys, events, channels, tokens, broadcast, start, jobs, and profile for saved \
            servers and keys.

            A client command takes the server from --server, else MARQUEE_SERVER, else a profile \
            (--profile NAME, MARQUEE_PROFILE, or the default of ~/.config/marquee/profiles.json or \
            $MARQUEE_CONFIG), else http://127.0.0.1:8080; the API key likewise from --api-key, \
            MARQUEE_API_KEY or the profile. A profile named with --profile beats the environment. \
            Tables by default; --json prints the server's JSON.

            \(CLIExitCode.table)
            """,
        subcommands: [
            ServeCommand.self, MigrateCommand.self, EmulatorCommand.self, DemoCommand.self,
            AppsCommand.self, KeysCommand.self, EventsCommand.self, ChannelsCommand.self, TokensCommand.self,
            BroadcastCommand.self, StartCommand.self, JobsCommand.self, ProfileCommand.self,
        ]
    )

    /// The process's entry point: Swift's tasks put where the environment says (before the first of
    /// them), the same path as `execute`, then the exit code.
    static func main() async {
        do {
            let executor = try ConcurrencyExecutor.chosen(in: ProcessInfo.processInfo.environment)
            if !executor.install() {
                // Not an error: the service runs the same, with a hop to an event loop and back
                // at each await on I/O.
                let warning =
                    "marquee: warning: Swift's tasks stay on Swift's own pool, SwiftNIO declined"
                    + " to run them on its event loops (\(ConcurrencyExecutor.key))\n"
                FileHandle.standardError.write(Data(warning.utf8))
            }
        } catch {
            FileHandle.standardError.write(Data("marquee: \(error)\n".utf8))
            Foundation.exit(CLIExitCode.usage.rawValue)
        }
        let code = await execute(Array(CommandLine.arguments.dropFirst()))
        Foundation.exit(code)
    }
}

/// `--log-level debug` and the like: swift-log's levels by their names.
extension Logger.Level: @retroactive ExpressibleByArgument {}

/// `--log-format json`.
extension LogFormat: ExpressibleByArgument {}
