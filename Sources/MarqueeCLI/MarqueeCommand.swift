import ArgumentParser

/// `marquee`: runs Live Activities for events with big audiences.
@main
struct MarqueeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "marquee",
        abstract: "Runs Apple Live Activities for events with big audiences over APNs broadcast channels.",
        subcommands: [MigrateCommand.self, EmulatorCommand.self]
    )
}
