import ArgumentParser
import Foundation
import MarqueeClient

/// `marquee profile`: named servers and their API keys in the profile file, so that commands
/// need neither flags nor exported keys.
struct ProfileCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "profile",
        abstract: "Save servers and API keys as named profiles (~/.config/marquee/profiles.json, or $MARQUEE_CONFIG).",
        subcommands: [SetProfile.self, List.self]
    )
}

extension ProfileCommand {
    struct SetProfile: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set",
            abstract: "Creates or updates a profile; the file is written readable by you only (0600).",
            discussion: "The first profile saved becomes the default; --default makes another one the default."
        )

        @Argument(help: "The profile's name, e.g. local or prod.")
        var name: String

        @Option(help: ArgumentHelp("The server's base URL.", valueName: "url"))
        var server: String?

        @Option(
            name: .customLong("api-key"),
            help: ArgumentHelp(
                "The API key (- reads it from standard input, out of the shell's history).",
                valueName: "key"
            )
        )
        var apiKey: String?

        @Flag(name: .customLong("default"), help: "Use this profile when none is named.")
        var makeDefault = false

        func validate() throws {
            if let server, MarqueeClient.serverURL(server) == nil {
                throw ValidationError("--server must be an http:// or https:// URL with a host")
            }
            if server == nil && apiKey == nil && !makeDefault {
                throw ValidationError("nothing to set: give --server, --api-key or --default")
            }
        }

        func run() async throws {
            let context = CLIContext.current
            let path = ProfileFile.path(environment: context.environment)
            var file = try ProfileFile.read(at: path) ?? ProfileFile()
            var profile = file.profiles[name] ?? .init()
            if let server { profile.server = server }
            if let apiKey {
                let key = apiKey == "-" ? readLine(strippingNewline: true) ?? "" : apiKey
                guard !key.isEmpty else { throw CLIFailure.usage("no API key on standard input") }
                profile.apiKey = key
            }
            file.profiles[name] = profile
            if makeDefault || file.defaultProfile == nil || file.profiles[file.defaultProfile ?? ""] == nil {
                file.defaultProfile = name
            }
            try file.write(to: path)
            let isDefault = file.defaultProfile == name ? " (default)" : ""
            context.print("Saved profile \(name)\(isDefault) in \(path)")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Lists the profiles: names and servers, never keys.")

        func run() async throws {
            let context = CLIContext.current
            let path = ProfileFile.path(environment: context.environment)
            guard let file = try ProfileFile.read(at: path), !file.profiles.isEmpty else {
                context.print(
                    "No profiles in \(path): save one with `marquee profile set NAME --server URL --api-key KEY`"
                )
                return
            }
            var table = Table("", "name", "server", "api key")
            for (name, profile) in file.profiles.sorted(by: { $0.key < $1.key }) {
                table.append(
                    file.defaultProfile == name ? "*" : "",
                    name,
                    profile.server ?? "(default)",
                    profile.apiKey == nil ? "-" : "set"
                )
            }
            context.print(table.text)
        }
    }
}
