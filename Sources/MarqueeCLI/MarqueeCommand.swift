import ArgumentParser
import Logging
import MarqueeServer

/// `marquee`: runs Live Activities for events with big audiences.
@main
struct MarqueeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "marquee",
        abstract: "Runs Apple Live Activities for events with big audiences over APNs broadcast channels.",
        subcommands: [ServeCommand.self, MigrateCommand.self, EmulatorCommand.self]
    )
}

/// `--log-level debug` and the like: swift-log's levels by their names.
extension Logger.Level: @retroactive ExpressibleByArgument {}

/// `--log-format json`.
extension LogFormat: ExpressibleByArgument {}
